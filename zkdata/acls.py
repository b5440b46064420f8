"""Kafka's ZooKeeper ACLs, path by path (`ZkData.defaultAcls` of Kafka 2.x).

With `zookeeper.set.acl=true` Kafka creates every znode with "the creator may do anything"
plus "anyone may read"; the sensitive roots (`/config/users`, `/config/brokers`,
`/delegation_token` and everything under them) are not readable by others, and the old
consumers' `/consumers` stays open to everyone, since consumers of every identity write
below it. Without secure mode every znode is open. A session is secure when it was made
with a default ACL other than the open one (`security.zk_credentials.kazoo_options`).
A secure session also closes the top of its tree (the chroot, or `/`) to writes by
anyone: Kafka secures a chroot it creates; a tree without chroot hangs `/controller` and
`/controller_epoch` directly off ZooKeeper's world-writable root.
Pure functions, any thread.
"""

from __future__ import annotations

from kazoo.client import KazooClient
from kazoo.security import ACL, CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE, Permissions

from zkdata import paths

#: Kafka's `ZkData.SensitiveRootPaths`: a path starting with one of these is readable by
#: its creator only.
SENSITIVE_ROOT_PATHS: tuple[str, ...] = (
    paths.CONFIG_USERS,
    paths.CONFIG_BROKERS,
    paths.DELEGATION_TOKEN,
)


def sensitive(path: str) -> bool:
    """Whether `path` falls under a sensitive root (a prefix match, as Kafka's)."""
    return any(path.startswith(root) for root in SENSITIVE_ROOT_PATHS)


def kafka_acls(path: str, secure: bool) -> list[ACL]:
    """The ACL Kafka gives a znode it creates at `path` (chroot-relative)."""
    if not secure or path == paths.CONSUMERS:
        return list(OPEN_ACL_UNSAFE)
    if sensitive(path):
        return list(CREATOR_ALL_ACL)
    return [*CREATOR_ALL_ACL, *READ_ACL_UNSAFE]


def writable_by_anyone(acl: list[ACL]) -> bool:
    """Whether `acl` lets anyone (the `world` scheme) do more than read."""
    return any(entry.id.scheme == "world" and entry.perms & ~Permissions.READ for entry in acl)


def secure_session(kazoo: KazooClient) -> bool:
    """Whether `kazoo` creates znodes with a default ACL other than the open one."""
    default = kazoo.default_acl
    return bool(default) and list(default) != list(OPEN_ACL_UNSAFE)
