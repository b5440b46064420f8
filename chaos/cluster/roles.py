"""Target roles: the strings a schedule names its targets by, resolved to compose services
only when a fault starts (`chaos.cluster.handle.ClusterHandle.resolve(role, rng)`), because who is
the controller or the busiest leader is known only then.

| role | resolves to | class |
| --- | --- | --- |
| `controller` | the broker holding `/controller` | brokers, one |
| `non-controller` | a seeded pick among the running brokers but the controller | brokers, one |
| `non-controller:<n>` | the n-th broker by id that is not the controller | brokers, one |
| `broker:<id>` | the broker with that id | brokers, one |
| `brokers:<id>,<id>` | the brokers with those ids | brokers, group |
| `random-broker` | a seeded pick among the running brokers | brokers, one |
| `busiest-leader` | the running broker leading the most partitions | brokers, one |
| `leader:<topic>:<partition>` | that partition's leader | brokers, one |
| `all-brokers` | every running broker | brokers, group |
| `non-controllers` | every running broker that is not the controller | brokers, group |
| `zk-leader` | the ensemble's leader | ZooKeeper, one |
| `zk-follower` | a seeded pick among the followers | ZooKeeper, one |
| `zk-followers` | every follower | ZooKeeper, group |
| `zk:<n>` | ZooKeeper server `zk<n>` | ZooKeeper, one |
| `all` | every service | any, group |

This module only parses roles (`parse_role`); it does not resolve them. Pure; any thread.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from admin.errors import InvalidTopicError
from admin.topic_names import validate_topic_name
from chaos.errors import UnknownRole

__all__ = ["ROLE_NAMES", "Role", "RoleClass", "parse_role"]


class RoleClass(enum.Enum):
    """Which services a role can resolve to."""

    BROKERS = "brokers"
    ZOOKEEPER = "zookeeper"
    ANY = "any"


@dataclass(frozen=True, slots=True)
class Role:
    """A parsed role: its text, its class, and whether it names a group of services."""

    text: str
    role_class: RoleClass
    group: bool


_FIXED: dict[str, tuple[RoleClass, bool]] = {
    "controller": (RoleClass.BROKERS, False),
    "non-controller": (RoleClass.BROKERS, False),
    "random-broker": (RoleClass.BROKERS, False),
    "busiest-leader": (RoleClass.BROKERS, False),
    "all-brokers": (RoleClass.BROKERS, True),
    "non-controllers": (RoleClass.BROKERS, True),
    "zk-leader": (RoleClass.ZOOKEEPER, False),
    "zk-follower": (RoleClass.ZOOKEEPER, False),
    "zk-followers": (RoleClass.ZOOKEEPER, True),
    "all": (RoleClass.ANY, True),
}

#: Every role's name or pattern, for messages and docs.
ROLE_NAMES: tuple[str, ...] = (
    *_FIXED,
    "non-controller:<n>",
    "broker:<id>",
    "brokers:<id>,<id>",
    "leader:<topic>:<partition>",
    "zk:<n>",
)

_BROKER = re.compile(r"broker:(\d+)|non-controller:([1-9]\d*)")
_BROKER_GROUP = re.compile(r"brokers:\d+(,\d+)+")
_ZK = re.compile(r"zk:([1-9]\d*)")
_LEADER = re.compile(r"leader:(.+):(\d+)")


def parse_role(text: object) -> Role:
    """The role `text` names; `UnknownRole` (with the roles there are) if it names none."""
    if not isinstance(text, str):
        raise UnknownRole(f"a role is a string, got {text!r}")
    fixed = _FIXED.get(text)
    if fixed is not None:
        return Role(text, fixed[0], fixed[1])
    if _BROKER.fullmatch(text):
        return Role(text, RoleClass.BROKERS, False)
    if _BROKER_GROUP.fullmatch(text):
        return Role(text, RoleClass.BROKERS, True)
    if _ZK.fullmatch(text):
        return Role(text, RoleClass.ZOOKEEPER, False)
    leader = _LEADER.fullmatch(text)
    if leader is not None:
        try:
            validate_topic_name(leader.group(1))
        except InvalidTopicError as exc:
            raise UnknownRole(f"role {text!r}: {exc}") from None
        return Role(text, RoleClass.BROKERS, False)
    raise UnknownRole(f"unknown role {text!r}; roles are {', '.join(ROLE_NAMES)}")
