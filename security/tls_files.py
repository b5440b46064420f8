"""Where the control plane's TLS material lives, and loading it for one role.

`<dir>/ca.crt` and `ca.key` are the cluster's CA; `<dir>/<role>.crt` and `<role>.key` the
certificate and key of a role, `broker` (every broker: its gRPC server, the controller's
and the replica fetchers' channels) or `client` (the CLI, the workload, chaos runs, the
benchmarks). A certificate's common name is its role. Loading needs no `cryptography`,
so the broker image can read the files without it. Any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CA = "ca"
BROKER = "broker"
CLIENT = "client"
ROLES = (BROKER, CLIENT)


class TlsMaterialError(Exception):
    """The TLS directory lacks a file a role needs, or cannot be read."""


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """The file layout of one TLS directory (`.secrets/tls` by default)."""

    directory: Path

    def cert(self, name: str) -> Path:
        """The PEM certificate of `name` (`ca`, `broker`, `client`)."""
        return self.directory / f"{name}.crt"

    def key(self, name: str) -> Path:
        """The PEM private key of `name`."""
        return self.directory / f"{name}.key"


@dataclass(frozen=True, slots=True)
class TlsIdentity:
    """What one role presents and trusts: the CA's certificate, its own and its key (PEM)."""

    role: str
    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes


def load_identity(directory: Path, role: str) -> TlsIdentity:
    """The identity of `role` from a TLS directory; `TlsMaterialError` if a file is missing."""
    if role not in ROLES:
        raise TlsMaterialError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    files = TlsFiles(directory)
    try:
        return TlsIdentity(
            role,
            files.cert(CA).read_bytes(),
            files.cert(role).read_bytes(),
            files.key(role).read_bytes(),
        )
    except OSError as exc:
        raise TlsMaterialError(
            f"cannot read the {role} TLS material in {directory} ({exc.strerror}: "
            f"{exc.filename}); run `make setup` or `python -m security init`"
        ) from exc
