"""The cluster's ZooKeeper identity (one digest user shared by every broker and tool, as a
Kafka cluster shares its JAAS `Client` login) and the kazoo options of Kafka's secure
mode (`zookeeper.set.acl=true`).

The credential file holds `<user>:<password>` on one line, mode 0600; `ensure_digest_file`
writes it once with a random password and leaves an existing valid one alone. A session
made with `kazoo_options(credentials)` authenticates with the digest scheme, and every
znode it creates gets Kafka's secure ACL: all rights for the creator (stored by ZooKeeper
as `digest:<user>:<base64 sha1>`) and read for anyone; `zkdata.acls` names the paths that
Kafka treats otherwise. The password never appears in a repr, an error or a log line.
Caller's thread.

    SecretFileError (security.secret_files)
        a credential file is missing, unreadable, open to others or malformed
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kazoo.security import ACL, make_digest_acl_credential

from security.secret_files import SecretFileError, read_private, write_private
from security.zk_tls import ZkTls
from zkdata import acls
from zkdata.kazoo_handler import PollingHandler

#: The file name under the secrets directory (`.secrets/zk-digest`).
FILE_NAME = "zk-digest"
#: The repository's secrets directory, made by `make setup` (gitignored).
REPO_SECRETS = Path(__file__).resolve().parents[1] / ".secrets"
#: The user name of the cluster's identity.
DEFAULT_USER = "testbed"
#: Bytes of randomness in a generated password (URL-safe base64 text).
PASSWORD_BYTES = 24
_BLANKS = frozenset("\n\r\t ")


@dataclass(frozen=True, slots=True)
class ZkDigestCredentials:
    """A digest identity: `user` and `password` (left out of repr)."""

    user: str
    password: str = field(repr=False)

    @property
    def auth_data(self) -> list[tuple[str, str]]:
        """kazoo's `auth_data`: one digest login."""
        return [("digest", f"{self.user}:{self.password}")]

    @property
    def acl_id(self) -> str:
        """The id ZooKeeper stores in a digest ACL entry: `<user>:<base64 sha1>`."""
        return str(make_digest_acl_credential(self.user, self.password))

    def __str__(self) -> str:
        return f"digest user {self.user}"


def generate(user: str = DEFAULT_USER) -> ZkDigestCredentials:
    """New credentials with a random password from `secrets`."""
    return ZkDigestCredentials(user, secrets.token_urlsafe(PASSWORD_BYTES))


def parse(text: str, source: str) -> ZkDigestCredentials:
    """`<user>:<password>` (one line, a trailing newline allowed); `SecretFileError` naming
    `source` when it is malformed."""
    line = text[:-1] if text.endswith("\n") else text
    user, colon, password = line.partition(":")
    if not colon or not user or not password:
        raise SecretFileError(f"{source} must hold one line <user>:<password>")
    if _BLANKS & (set(user) | set(password)):
        raise SecretFileError(f"{source}: user and password must not contain blanks or newlines")
    return ZkDigestCredentials(user, password)


def load(path: Path) -> ZkDigestCredentials:
    """The credentials in `path`; `SecretFileError` when missing, open to others or
    malformed."""
    return parse(read_private(path), str(path))


def ensure_digest_file(directory: Path, user: str = DEFAULT_USER) -> Path:
    """`directory/zk-digest`, written with new credentials unless a valid one is there
    (idempotent: the cluster's identity does not change under a running cluster)."""
    path = directory / FILE_NAME
    try:
        load(path)
    except SecretFileError:
        if path.exists() and path.stat().st_size > 0:
            raise  # something is there but wrong: never overwrite it silently
        creds = generate(user)
        write_private(path, f"{creds.user}:{creds.password}\n")
    return path


def repo_digest_file() -> Path | None:
    """The repository's `.secrets/zk-digest` (the compose cluster's identity), if set up."""
    path = REPO_SECRETS / FILE_NAME
    return path if path.exists() else None


def secure_acl() -> list[ACL]:
    """The default ACL of a secure session: creator-all plus world-read (Kafka's for every
    path that is neither sensitive nor `/consumers`)."""
    return acls.kafka_acls("/", secure=True)


def kazoo_options(
    credentials: ZkDigestCredentials | None, tls: ZkTls | None = None
) -> dict[str, Any]:
    """Keyword arguments for `KazooClient`: a `PollingHandler` of its own (kazoo's
    connection thread with a cheaper select), and with credentials, digest `auth_data` and
    the secure `default_acl`; without, no ACL (open znodes, as Kafka without secure
    mode). With `tls`, the connection is TLS with the cluster's CA (`security.zk_tls`)."""
    options: dict[str, Any] = {"handler": PollingHandler()}
    if credentials is not None:
        options.update(auth_data=credentials.auth_data, default_acl=secure_acl())
    if tls is not None:
        options.update(tls.kazoo_options())
    return options
