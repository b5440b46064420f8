"""How a local ZooKeeper member (`harness.zk_ensemble.ZkEnsemble`) faces its clients:
its `zoo.cfg` lines for a plaintext client port, or secured as the compose cluster's
servers are (given a `ZkTls`), the jars TLS needs besides, and whether it serves, asked
with a four-letter word or of its admin server. Pure, but for `four_letter_word` and
`admin_server_state`, which talk to the member on the calling thread.
"""

from __future__ import annotations

import re
import socket

from security.tls_files import CA, TlsFiles, zookeeper_role
from security.zk_tls import ZkTls

__all__ = [
    "TLS_CLASSPATH",
    "admin_server_state",
    "four_letter_word",
    "member_lines",
    "tls_lines",
]

JAVA_DIR = "/usr/share/java"
HOST = "127.0.0.1"
#: What the Netty connection factory's TLS handler and the admin server need besides
#: what zookeeper.jar's manifest names.
TLS_CLASSPATH = ":".join(
    f"{JAVA_DIR}/{jar}" for jar in ("netty-codec.jar", "netty-resolver.jar", "servlet-api.jar")
)
_SERVER_STATE = re.compile(rb'"server_state"\s*:\s*"(\w+)"')


def member_lines(tls: ZkTls | None, myid: int, client_port: int, admin_port: int) -> list[str]:
    """`zoo.cfg` lines of member `myid`'s client side: `tls_lines` with `tls`, else a
    plaintext client port on loopback and no admin server."""
    if tls is not None:
        return tls_lines(tls, myid, client_port, admin_port)
    return [f"clientPort={client_port}", f"clientPortAddress={HOST}", "admin.enableServer=false"]


def tls_lines(tls: ZkTls, myid: int, client_port: int, admin_port: int) -> list[str]:
    """`zoo.cfg` lines of member `myid`: the client port on TLS only with client
    certificates of `tls`'s CA required, the quorum over TLS (peers checked against the
    CA only, as in the compose cluster), the admin server on loopback `admin_port`. The
    member presents `zk<myid>.pem` of `tls`'s directory, whose names include 127.0.0.1."""
    files = TlsFiles(tls.directory)
    store, trust = files.key_store(zookeeper_role(myid)), files.cert(CA)
    lines = [
        f"secureClientPort={client_port}",
        f"secureClientPortAddress={HOST}",
        "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
        "ssl.clientAuth=need",
        "sslQuorum=true",
        "ssl.quorum.clientAuth=need",
        "ssl.quorum.hostnameVerification=false",
        "admin.enableServer=true",
        f"admin.serverAddress={HOST}",
        f"admin.serverPort={admin_port}",
    ]
    for prefix in ("ssl", "ssl.quorum"):
        lines += [
            f"{prefix}.keyStore.location={store}",
            f"{prefix}.keyStore.type=PEM",
            f"{prefix}.trustStore.location={trust}",
            f"{prefix}.trustStore.type=PEM",
        ]
    return lines


def admin_server_state(port: int, timeout: float = 1.0) -> str | None:
    """The `server_state` (`leader`, `follower`, ...) a member's admin server on
    127.0.0.1:`port` reports for `srvr`; None when it cannot be reached or has no
    answer yet. Blocks the calling thread for at most about `timeout` per operation."""
    request = f"GET /commands/srvr HTTP/1.0\r\nHost: {HOST}\r\n\r\n".encode("ascii")
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as sock:
            sock.sendall(request)
            chunks = []
            while chunk := sock.recv(4096):
                chunks.append(chunk)
    except OSError:
        return None
    found = _SERVER_STATE.search(b"".join(chunks))
    return found.group(1).decode("ascii") if found else None


def four_letter_word(port: int, command: str, timeout: float = 1.0) -> str | None:
    """Send a ZooKeeper four-letter word to 127.0.0.1:``port`` and return the reply.

    Returns ``None`` when the server cannot be reached. Runs on the calling thread,
    blocking for at most about ``timeout`` seconds per socket operation.
    """
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as sock:
            sock.sendall(command.encode("ascii"))
            chunks = []
            while chunk := sock.recv(4096):
                chunks.append(chunk)
    except OSError:
        return None
    return b"".join(chunks).decode("utf-8", errors="replace")
