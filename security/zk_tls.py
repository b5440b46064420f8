"""How a ZooKeeper client speaks TLS to the cluster's ensemble.

The compose cluster's ZooKeeper servers listen on TLS only and require a client
certificate signed by the cluster's CA (`ssl.clientAuth=need`). A client holds a `ZkTls`:
the TLS directory of `security.tls_files` and the role whose certificate it presents
(`broker` for the brokers, `client` for every tool). `kazoo_options()` gives kazoo's
keyword arguments (TLS on, the CA trusted, the certificate presented, the server's name
checked against its certificate); `ssl_context()` the same for a plain socket, which the
four-letter words (`zkdata.fourletter`) use. The digest login
(`security.zk_credentials`) is sent over the encrypted connection as before.

Nothing is read before a connection is made: kazoo loads the files on every (re)connection.
`check()` tells up front whether they are there. Any thread.

    TlsMaterialError (security.tls_files)
        a file of the role is missing or unreadable
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from security.tls_files import CA, CLIENT, ROLES, TlsFiles, TlsMaterialError


@dataclass(frozen=True, slots=True)
class ZkTls:
    """A ZooKeeper client's TLS: trust the CA of `directory`, present `role`'s certificate."""

    directory: Path
    role: str = CLIENT

    @property
    def files(self) -> TlsFiles:
        """The layout of the TLS directory."""
        return TlsFiles(self.directory)

    def check(self) -> ZkTls:
        """Itself, once the CA certificate and the role's certificate and key are readable;
        `TlsMaterialError` naming the first that is not."""
        if self.role not in ROLES:
            raise TlsMaterialError(f"unknown role {self.role!r}; expected one of {ROLES}")
        files = self.files
        for path in (files.cert(CA), files.cert(self.role), files.key(self.role)):
            try:
                path.open("rb").close()
            except OSError as exc:
                raise TlsMaterialError(
                    f"cannot read the ZooKeeper TLS material {path} ({exc.strerror}); "
                    "run `make setup` or `python -m security init`"
                ) from exc
        return self

    def kazoo_options(self) -> dict[str, Any]:
        """Keyword arguments for `KazooClient`: TLS with the role's certificate, the CA as
        the only trust, and the server's host name checked against its certificate."""
        files = self.files
        return {
            "use_ssl": True,
            "ca": str(files.cert(CA)),
            "certfile": str(files.cert(self.role)),
            "keyfile": str(files.key(self.role)),
            "verify_certs": True,
            "check_hostname": True,
        }

    def ssl_context(self) -> ssl.SSLContext:
        """A client context with the same trust and certificate, for a plain socket."""
        files = self.files
        context = ssl.create_default_context(cafile=str(files.cert(CA)))
        context.load_cert_chain(str(files.cert(self.role)), str(files.key(self.role)))
        return context


def zk_tls_choice(directory: Path | None, role: str = CLIENT) -> ZkTls | None:
    """`ZkTls` for `directory` (checked), or None (plaintext) without one."""
    return None if directory is None else ZkTls(directory, role).check()


#: The repository's TLS directory, made by `make setup` (gitignored).
REPO_TLS_DIR = Path(__file__).resolve().parents[1] / ".secrets" / "tls"


def repo_zk_tls() -> ZkTls | None:
    """The tools' ZooKeeper TLS for the compose cluster: the repository's `.secrets/tls`
    and the client certificate, if set up."""
    return ZkTls(REPO_TLS_DIR) if REPO_TLS_DIR.is_dir() else None
