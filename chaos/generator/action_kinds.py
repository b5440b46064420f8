"""The action kinds a schedule may name: steps that are not faults but admin operations
the runner performs at their time (`chaos.run.actions`), with nothing to undo.

| action | params | what the runner does |
| --- | --- | --- |
| `reassign` | `topic`, `shift` (1) | writes `/admin/reassign_partitions` for all of `topic` |
| `create-topic` | `topic`, `partitions` (3), `replication_factor` (3) | creates `topic` |
| `add-partitions` | `topic`, `partitions` | grows `topic` to `partitions` partitions |
| `delete-topic` | `topic` | writes `/admin/delete_topics/<topic>` |
| `move-controller` | - | deletes `/controller`: the brokers elect a controller again |
| `elect-leaders` | `topic`, `timeout_ms` (500) | asks the controller to elect preferred leaders |
| `alter-config` | `topic`, `key`, `value` | sets an override of `topic` and announces it |
| `vacate` | `broker` | moves every replica off `broker` (`broker:<id>`, `non-controller:<n>`) |

`elect-leaders` is `kafka-leader-election.sh --election-type preferred` (KIP-183, not
persisted in ZooKeeper): the controller answers after `timeout_ms` at the latest
(REQUEST_TIMED_OUT when its elections are not done by then) and carries on electing, so
a slow controller does not hold up the schedule.

`alter-config` is `kafka-configs.sh --alter --entity-type topics --add-config key=value`:
`key` is `unclean.leader.election.enable` (`true` or `false`) or `min.insync.replicas` (an
integer of at least 1), the overrides the controller and the brokers act on.

`vacate` retires a broker as an operator does (`kafka-reassign-partitions.sh` with a
broker list that leaves it out): each of its replicas moves to the live broker holding
the fewest of the topic's, or is dropped where every live broker holds one already, so
the broker stays registered hosting nothing; `non-controller:<n>` is resolved when the
action runs, as a fault's role is.

`add-partitions` is `kafka-topics.sh --alter --partitions`: `partitions` is the new
count, above the topic's current one; the controller creates the new partitions.

`reassign` moves each replica on the i-th of the sorted live broker ids to the
(i + shift)-th, modulo their count: with replication factor 2 on 3 brokers every partition
gets a replica that must copy the log, so the reassignment takes a while.

An action's `topic` names the scenario's topic or one beside it, `<scenario topic>-<suffix>`;
the run maps both onto its own topic name (`chaos.run.actions.run_topic`).

Params are JSON scalars (`chaos.faults.params`). Pure; any thread.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from chaos.errors import UnknownKind
from chaos.faults.params import ParamRule, Scalar, positive_int

__all__ = [
    "ACTION_KINDS",
    "CONFIG_KEYS",
    "CONFIG_VALUES",
    "VACATED_BROKER",
    "ActionKind",
    "action_kind",
]

#: The brokers `vacate` names (`chaos.run.vacate` resolves them).
VACATED_BROKER = re.compile(r"broker:(\d+)|non-controller:([1-9]\d*)")


def _topic(value: Scalar) -> bool:
    return isinstance(value, str) and bool(value)


#: The topic overrides `alter-config` sets, each with the values a generator draws: the
#: controller reads the first (an unclean election of the topic's offline partitions once
#: it turns true), the brokers the second.
CONFIG_VALUES: Mapping[str, tuple[str, ...]] = {
    "unclean.leader.election.enable": ("true", "false"),
    "min.insync.replicas": ("1", "2"),
}
CONFIG_KEYS = tuple(CONFIG_VALUES)


def _vacated(value: Scalar) -> bool:
    return isinstance(value, str) and VACATED_BROKER.fullmatch(value) is not None


def _config_key(value: Scalar) -> bool:
    return value in CONFIG_KEYS


@dataclass(frozen=True, slots=True)
class ActionKind:
    """What an action kind takes: its params (an action has no target and no duration)."""

    name: str
    params: tuple[ParamRule, ...] = ()


ACTION_KINDS: Mapping[str, ActionKind] = {
    k.name: k
    for k in (
        ActionKind(
            "reassign",
            (
                ParamRule("topic", None, _topic, "a topic name"),
                ParamRule("shift", 1, positive_int, "an integer > 0"),
            ),
        ),
        ActionKind(
            "create-topic",
            (
                ParamRule("topic", None, _topic, "a topic name"),
                ParamRule("partitions", 3, positive_int, "an integer > 0"),
                ParamRule("replication_factor", 3, positive_int, "an integer > 0"),
            ),
        ),
        ActionKind(
            "add-partitions",
            (
                ParamRule("topic", None, _topic, "a topic name"),
                ParamRule("partitions", None, positive_int, "an integer > 0"),
            ),
        ),
        ActionKind("delete-topic", (ParamRule("topic", None, _topic, "a topic name"),)),
        ActionKind("move-controller"),
        ActionKind(
            "elect-leaders",
            (
                ParamRule("topic", None, _topic, "a topic name"),
                ParamRule("timeout_ms", 500, positive_int, "an integer > 0"),
            ),
        ),
        ActionKind(
            "alter-config",
            (
                ParamRule("topic", None, _topic, "a topic name"),
                ParamRule("key", None, _config_key, " or ".join(CONFIG_KEYS)),
                ParamRule("value", None, _topic, "a value"),
            ),
        ),
        ActionKind(
            "vacate",
            (ParamRule("broker", None, _vacated, "broker:<id> or non-controller:<n>"),),
        ),
    )
}


def action_kind(name: object) -> ActionKind:
    """The action kind called `name`; `UnknownKind` if there is none."""
    kind = ACTION_KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise UnknownKind(f"unknown action kind {name!r}; actions are {', '.join(ACTION_KINDS)}")
    return kind
