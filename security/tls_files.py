"""Where the control plane's TLS material lives, and loading it for one role.

`<dir>/ca.crt` and `ca.key` are the cluster's CA; `<dir>/<role>.crt` and `<role>.key` the
certificate and key of a role, `broker` (every broker: its gRPC server, the controller's
and the replica fetchers' channels) or `client` (the CLI, the workload, chaos runs, the
benchmarks). Broker `N` has its own certificate, role `broker-N` (`broker-N.crt`,
`broker-N.key`), which compose mounts as the broker's `broker.crt`/`broker.key`; the shared
`broker` certificate stays for brokers run on the host (the benchmarks) and the chaos
request proxy. A certificate's common name is its role. ZooKeeper server `N` has `zkN.crt`,
`zkN.key` and `zkN.pem` (both in one file, ZooKeeper's PEM key store); ZooKeeper clients
present the `broker` (brokers) or `client` (every tool) certificate. Loading needs no
`cryptography`, so the broker image can read the files without it.

A tool (the CLI, the workload, the benchmarks) is told its TLS directory by an option or
`TLS_DIR`; `tls_dir_choice` turns that into a directory or plaintext, defaulting to
`.secrets/tls` of the working directory (the repository, where `make` runs) when it exists.
Any thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

#: Where `make setup` writes the TLS material, relative to the repository.
DEFAULT_TLS_DIR = Path(".secrets/tls")
#: The value of a TLS directory option that asks for plaintext.
OFF = "off"
CA = "ca"
BROKER = "broker"
CLIENT = "client"
ROLES = (BROKER, CLIENT)
#: The role of ZooKeeper server `N` is `zkN`, its compose service name.
ZOOKEEPER_PREFIX = "zk"
#: The role (and common name) of broker `N`'s own certificate is `broker-N`
#: (`rpc.wire.access` reads the id back from the common name).
BROKER_PREFIX = "broker-"
#: The CA a rotation brings in, beside `ca` until the old one is retired
#: (`security.rotation_files`).
NEXT_CA = "ca-next"
#: The file that says a CA rotation is under way, and which of its phases is in place.
ROTATION_STATE = "rotation"


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

    def key_store(self, name: str) -> Path:
        """The PEM key and certificate of `name` in one file (a ZooKeeper server's)."""
        return self.directory / f"{name}.pem"

    @property
    def rotation_state(self) -> Path:
        """The file naming the phase of a CA rotation under way (absent: none)."""
        return self.directory / ROTATION_STATE


def rotation_under_way(files: TlsFiles) -> bool:
    """Whether a CA rotation has begun in the directory and not finished."""
    return files.rotation_state.exists()


def zookeeper_role(server: int) -> str:
    """The certificate role (and compose service name) of ZooKeeper server `server`."""
    return f"{ZOOKEEPER_PREFIX}{server}"


def broker_role(broker_id: int) -> str:
    """The certificate role (and common name) of broker `broker_id`'s own certificate."""
    return f"{BROKER_PREFIX}{broker_id}"


@dataclass(frozen=True, slots=True)
class TlsIdentity:
    """What one role presents and trusts: the CA's certificate, its own and its key (PEM)."""

    role: str
    ca_pem: bytes
    cert_pem: bytes
    #: Never in the repr: identities end up in test reports and logs.
    key_pem: bytes = field(repr=False)


class FollowedIdentity:
    """A role's identity that follows its files: `current()` reads them again when one of
    them changed (another inode, size or modification time: a rotation replaces them),
    else returns the identity it read last. A long-lived client that asks it before each
    connection takes up the certificates of a CA rotation. Any thread (a race reads the
    files twice)."""

    def __init__(self, directory: Path, role: str) -> None:
        self.directory = directory
        self.role = role
        files = TlsFiles(directory)
        self._paths = (files.cert(CA), files.cert(role), files.key(role))
        self._stamp: tuple[tuple[int, int, int], ...] = ()
        self._identity: TlsIdentity | None = None

    def current(self) -> TlsIdentity:
        """The identity the files hold now; `TlsMaterialError` when one cannot be read."""
        try:
            stamp = tuple((s.st_ino, s.st_size, s.st_mtime_ns) for s in map(Path.stat, self._paths))
        except OSError:
            stamp = ()
        if self._identity is None or not stamp or stamp != self._stamp:
            self._identity = load_identity(self.directory, self.role)
            self._stamp = stamp
        return self._identity


def tls_dir_choice(raw: str | None, default: Path = DEFAULT_TLS_DIR) -> Path | None:
    """The TLS directory a tool was given as `raw` ('off': None, plaintext); unset or
    empty: `default` if it exists, else None."""
    if raw is not None and raw.strip():
        return None if raw.strip().lower() == OFF else Path(raw.strip())
    return default if default.is_dir() else None


def client_identity(directory: Path | None) -> TlsIdentity | None:
    """The client role's identity from `directory`, or None (plaintext) without one."""
    return load_identity(directory, CLIENT) if directory is not None else None


def broker_identity(directory: Path, broker_id: int) -> TlsIdentity:
    """Broker `broker_id`'s identity from a TLS directory: its own `broker-N` certificate
    when the directory has it (the repository's `.secrets/tls`, for brokers run on the
    host), else the `broker` certificate (compose mounts a broker's own pair under that
    name, and a directory made for fewer brokers holds only the shared one)."""
    own = broker_role(broker_id)
    files = TlsFiles(directory)
    if files.cert(own).is_file() and files.key(own).is_file():
        return load_identity(directory, own)
    return load_identity(directory, BROKER)


def _is_broker_role(role: str) -> bool:
    number = role.removeprefix(BROKER_PREFIX)
    return role != number and number.isascii() and number.isdigit()


def load_identity(directory: Path, role: str) -> TlsIdentity:
    """The identity of `role` from a TLS directory; `TlsMaterialError` if a file is missing."""
    if role not in ROLES and not _is_broker_role(role):
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
