"""The fault kinds and action kinds a schedule may name: which targets each fault takes,
whether it lasts, and its params with their defaults and ranges.

Fault kinds (the names are fixed; `chaos.faults` implements them):

| kind | targets | lasts | params (default) |
| --- | --- | --- | --- |
| `kill` | one broker or ZooKeeper server, or all brokers | yes (restart at its end) | - |
| `stop` | same | yes (start at its end) | `timeout_s` (30) |
| `pause` | same | yes (unpause at its end) | - |
| `bounce` | one broker or all brokers | no: duration 0 | - |
| `zk-leader-kill` | `zk-leader` only | yes | - |
| `zk-pause` | one ZooKeeper server | yes | - |
| `partition` | any role | yes | `grudge` (`halves`) |
| `zk-isolate` | brokers | yes | - |
| `zk-deaf` | brokers | yes | - |
| `zk-lost-reply` | brokers | no: duration 0 | `hold_s` (2.5), `window_s` (0) |
| `zk-reset` | brokers | no: duration 0 | - |
| `broker-isolate` | brokers | yes | - |
| `session-expire` | brokers | either (see below) | - |
| `loss` | brokers | yes | `percent` (20) |
| `bandwidth` | brokers | yes | `rate_kbit` (256) |
| `latency` | brokers | yes | `delay_ms` (100) |

Action kinds are steps that are not faults: admin operations the runner performs at their
time, with nothing to undo.

| action | params | what the runner does |
| --- | --- | --- |
| `reassign` | `topic`, `shift` (1) | writes `/admin/reassign_partitions` for all of `topic` |
| `create-topic` | `topic`, `partitions` (3) | creates `topic` with replication factor 3 |
| `delete-topic` | `topic` | writes `/admin/delete_topics/<topic>` |
| `move-controller` | - | deletes `/controller`: the brokers elect a controller again |
| `elect-leaders` | `topic`, `timeout_ms` (500) | asks the controller to elect preferred leaders |

`session-expire` with duration 0 heals as soon as the broker's registration is gone; a
longer duration keeps it cut from ZooKeeper that much longer.

`elect-leaders` is `kafka-leader-election.sh --election-type preferred` (KIP-183, not
persisted in ZooKeeper): the controller answers after `timeout_ms` at the latest
(REQUEST_TIMED_OUT when its elections are not done by then) and carries on electing, so
a slow controller does not hold up the schedule.

`reassign` moves each replica on the i-th of the sorted live broker ids to the
(i + shift)-th, modulo their count: with replication factor 2 on 3 brokers every partition
gets a replica that must copy the log, so the reassignment takes a while.

An action's `topic` names the scenario's topic or one beside it, `<scenario topic>-<suffix>`;
the run maps both onto its own topic name (`chaos.actions.run_topic`).

Params are JSON scalars. A param left out takes its default, so a step always carries all
of its params (a replay does not depend on today's defaults). Pure; any thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from chaos.roles import RoleClass, parse_role
from chaos.schedule_errors import BadParams, UnknownKind, UnknownRole

__all__ = [
    "ACTION_KINDS",
    "FAULT_KINDS",
    "GRUDGES",
    "ActionKind",
    "FaultKind",
    "ParamItems",
    "ParamRule",
    "Scalar",
    "action_kind",
    "check_target",
    "fault_kind",
    "normalize_params",
]

#: A JSON scalar, the only kind of param value.
Scalar = str | int | float | bool | None
#: Params as a hashable value: `(name, value)` pairs sorted by name.
ParamItems = tuple[tuple[str, Scalar], ...]

#: The `partition` fault's grudges (`chaos.faults.grudge`).
GRUDGES = ("halves", "isolate", "majorities-ring", "bridge")


def _number(value: Scalar) -> float | None:
    """`value` as a number, or None when it is not one (a bool is not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _positive(value: Scalar) -> bool:
    number = _number(value)
    return number is not None and number > 0


def _positive_int(value: Scalar) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _percent(value: Scalar) -> bool:
    number = _number(value)
    return number is not None and 0 < number <= 100


#: `zk-lost-reply`'s bounds (`chaos.faults.lost_reply` checks the same ones).
MAX_HOLD_S = 3.0
DEFAULT_HOLD_S = 2.5
MAX_WINDOW_S = 20.0


def _hold(value: Scalar) -> bool:
    number = _number(value)
    return number is not None and 0 < number <= MAX_HOLD_S


def _window(value: Scalar) -> bool:
    number = _number(value)
    return number is not None and 0 <= number <= MAX_WINDOW_S


def _grudge(value: Scalar) -> bool:
    return value in GRUDGES


def _topic(value: Scalar) -> bool:
    return isinstance(value, str) and bool(value)


@dataclass(frozen=True, slots=True)
class ParamRule:
    """One param: its name, default, check and the range in words (for messages)."""

    name: str
    default: Scalar
    check: Callable[[Scalar], bool]
    expects: str


@dataclass(frozen=True, slots=True)
class FaultKind:
    """What a fault kind takes: the role classes of its targets (or the one role it acts
    on, `only_role`), whether it lasts (`True`: duration > 0, `False`: duration 0, `None`:
    either), and its params."""

    name: str
    targets: frozenset[RoleClass]
    lasts: bool | None
    params: tuple[ParamRule, ...] = ()
    only_role: str | None = None


@dataclass(frozen=True, slots=True)
class ActionKind:
    """What an action kind takes: its params (an action has no target and no duration)."""

    name: str
    params: tuple[ParamRule, ...] = ()


_B = frozenset({RoleClass.BROKERS})
_Z = frozenset({RoleClass.ZOOKEEPER})
_BZ = _B | _Z
_ANYWHERE = frozenset(RoleClass)

FAULT_KINDS: Mapping[str, FaultKind] = {
    k.name: k
    for k in (
        FaultKind("kill", _BZ, True),
        FaultKind("stop", _BZ, True, (ParamRule("timeout_s", 30, _positive, "> 0"),)),
        FaultKind("pause", _BZ, True),
        FaultKind("bounce", _B, False),
        FaultKind("zk-leader-kill", _Z, True, only_role="zk-leader"),
        FaultKind("zk-pause", _Z, True),
        FaultKind(
            "partition",
            _ANYWHERE,
            True,
            (ParamRule("grudge", "halves", _grudge, "|".join(GRUDGES)),),
        ),
        FaultKind("zk-isolate", _B, True),
        FaultKind("zk-deaf", _B, True),
        FaultKind(
            "zk-lost-reply",
            _B,
            False,
            (
                ParamRule("hold_s", DEFAULT_HOLD_S, _hold, f"in (0, {MAX_HOLD_S:g}]"),
                ParamRule("window_s", 0, _window, f"in [0, {MAX_WINDOW_S:g}]"),
            ),
        ),
        FaultKind("zk-reset", _B, False),
        FaultKind("broker-isolate", _B, True),
        FaultKind("session-expire", _B, None),
        FaultKind("loss", _B, True, (ParamRule("percent", 20, _percent, "in (0, 100]"),)),
        FaultKind(
            "bandwidth",
            _B,
            True,
            (ParamRule("rate_kbit", 256, _positive_int, "an integer > 0"),),
        ),
        FaultKind(
            "latency",
            _B,
            True,
            (ParamRule("delay_ms", 100, _positive_int, "an integer > 0"),),
        ),
    )
}

ACTION_KINDS: Mapping[str, ActionKind] = {
    k.name: k
    for k in (
        ActionKind(
            "reassign",
            (
                ParamRule("topic", None, _topic, "a topic name"),
                ParamRule("shift", 1, _positive_int, "an integer > 0"),
            ),
        ),
        ActionKind(
            "create-topic",
            (
                ParamRule("topic", None, _topic, "a topic name"),
                ParamRule("partitions", 3, _positive_int, "an integer > 0"),
            ),
        ),
        ActionKind("delete-topic", (ParamRule("topic", None, _topic, "a topic name"),)),
        ActionKind("move-controller"),
        ActionKind(
            "elect-leaders",
            (
                ParamRule("topic", None, _topic, "a topic name"),
                ParamRule("timeout_ms", 500, _positive_int, "an integer > 0"),
            ),
        ),
    )
}


def fault_kind(name: object) -> FaultKind:
    """The fault kind called `name`; `UnknownKind` if there is none."""
    kind = FAULT_KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise UnknownKind(f"unknown fault kind {name!r}; kinds are {', '.join(FAULT_KINDS)}")
    return kind


def action_kind(name: object) -> ActionKind:
    """The action kind called `name`; `UnknownKind` if there is none."""
    kind = ACTION_KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise UnknownKind(f"unknown action kind {name!r}; actions are {', '.join(ACTION_KINDS)}")
    return kind


def check_target(kind: FaultKind, target: object) -> None:
    """Raise `UnknownRole` unless `target` is a role this fault kind can act on."""
    role = parse_role(target)
    if kind.only_role is not None and role.text != kind.only_role:
        raise UnknownRole(f"{kind.name} acts on {kind.only_role} only, not on {role.text!r}")
    if role.role_class not in kind.targets:
        wanted = " or ".join(sorted(c.value for c in kind.targets))
        raise UnknownRole(f"{kind.name} acts on {wanted}, not on role {role.text!r}")


def normalize_params(
    what: str,
    rules: tuple[ParamRule, ...],
    params: Mapping[str, object] | Iterable[tuple[str, object]],
) -> ParamItems:
    """`params` with the defaults filled in, checked against `rules`, as sorted items.
    `what` names the kind in messages. `BadParams` for an unknown name or a bad value."""
    given = dict(params.items() if isinstance(params, Mapping) else params)
    known = {rule.name: rule for rule in rules}
    unknown = sorted(str(name) for name in given if name not in known)
    if unknown:
        takes = ", ".join(known) or "no params"
        raise BadParams(f"{what} does not take {', '.join(unknown)} (it takes {takes})")
    items: list[tuple[str, Scalar]] = []
    for name, rule in sorted(known.items()):
        if name not in given and rule.default is None:
            raise BadParams(f"{what} needs the param {name} ({rule.expects})")
        value = given.get(name, rule.default)
        if not isinstance(value, str | int | float | bool) or not rule.check(value):
            raise BadParams(f"{what}: {name} must be {rule.expects}, got {value!r}")
        items.append((name, value))
    return tuple(items)
