"""ZooKeeper's four-letter words (`srvr`, `ruok`, `mntr`), over a plain socket or, for a
server that listens on TLS only, over TLS with the caller's client context (ZooKeeper's
Netty connection factory answers them after the handshake). Blocks the calling thread up
to `timeout_s`."""

from __future__ import annotations

import socket
import ssl


def four_letter_word(
    host: str, port: int, word: str, timeout_s: float = 2.0, tls: ssl.SSLContext | None = None
) -> str:
    """Send `word` and return the whole reply; raises OSError if unreachable (a refused
    TLS handshake is an `ssl.SSLError`, an OSError too)."""
    with socket.create_connection((host, port), timeout=timeout_s) as raw:
        sock = raw if tls is None else tls.wrap_socket(raw, server_hostname=host)
        with sock:
            sock.sendall(word.encode("ascii"))
            chunks = []
            while True:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def server_mode(
    host: str, port: int, timeout_s: float = 2.0, tls: ssl.SSLContext | None = None
) -> str:
    """`leader`, `follower`, `standalone`, `not serving` or `unreachable`."""
    try:
        reply = four_letter_word(host, port, "srvr", timeout_s, tls)
    except OSError:
        return "unreachable"
    for line in reply.splitlines():
        if line.startswith("Mode:"):
            return line.split(":", 1)[1].strip()
    return "not serving"
