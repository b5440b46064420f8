"""Every fault type, in one registry (`FAULT_TYPES`): its kind name, the role classes of
its targets, its duration rule, its params with their defaults and ranges, and how the
fault is built, from a schedule step (`build(targets, params)`) and back from its
`describe()` JSON (`rebuild(data)`, used by the heal state and `python -m chaos heal`).
A new kind is one entry here and a fault class.

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
| `zk-lost-reply` | brokers | no: duration 0 | `hold_s` (2.5), `window_s` (0), `writes_only` (no) |
| `zk-reset` | brokers | no: duration 0 | - |
| `broker-isolate` | brokers | yes | - |
| `session-expire` | brokers | either (see below) | - |
| `loss` | brokers | yes | `percent` (20) |
| `bandwidth` | brokers | yes | `rate_kbit` (256) |
| `latency` | brokers | yes | `delay_ms` (100) |
| `request` | one broker | yes | see below |
| `cpu-starve` | one broker or ZooKeeper server, or all brokers | yes | `percent` of a core (5) |
| `memory-squeeze` | same | yes | `limit_mb` (64) |
| `clock` | one broker or ZooKeeper server, or all brokers | either | see below |
| `disk-eio` | brokers | yes | `op` (`write`), `glob` (`*`), `probability` (1) |
| `disk-slow` | brokers | yes | `op` (`any`), `delay_ms` (100) |
| `disk-full` | brokers | yes | `budget_bytes` (0) |
| `disk-volatile` | brokers | yes | - |
| `power-loss` | brokers | no: duration 0 | - |
| `cert-rotation` | `all` only | no: duration 0 (its start is the whole rotation) | - |

`request` takes `action` (`duplicate`), `kinds` (`all`), `count` (1), `probability` (1),
`delay_ms` (2000), `hold_s` (30), `seed` (0) (`chaos.faults.request_plan`) and `effect`
(`acted`: in effect once it acted on a request; `armed`: once its proxy runs).

`clock` takes `action` (`bump`; `strobe`, `rate`, `reset`), `offset_ms` (60000),
`other_offset_ms` (0, a strobe's other side), `period_ms` (1000) and `factor` (2, a rate's
speed) (`chaos.faults.clock`).

The disk kinds and `power-loss` act through the brokers' disk layers (`chaos.faults.disk`,
`chaos.faults.power`), which the cluster must have been started with; `power-loss` needs
its targets' layers armed by a `disk-volatile` that lasts over it.

`session-expire` with duration 0 heals as soon as the broker's registration is gone; a
longer duration keeps it cut from ZooKeeper that much longer.

Params are JSON scalars (`chaos.faults.params`). A param left out takes its default, so a
step always carries all of its params (a replay does not depend on today's defaults).
Pure; any thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from chaos.cluster.roles import RoleClass, parse_role
from chaos.errors import UnknownKind, UnknownRole
from chaos.faults.base import Fault
from chaos.faults.cert_rotation import CertRotation
from chaos.faults.clock import ACTIONS as CLOCK_ACTIONS
from chaos.faults.clock import MAX_OFFSET_MS, MAX_PERIOD_MS, MIN_PERIOD_MS, ClockFault
from chaos.faults.clock_rate import FACTOR_RULE
from chaos.faults.disk import DiskEio, DiskFault, DiskFull, DiskSlow
from chaos.faults.fields import BadFaultData, targets_from
from chaos.faults.grudge import GRUDGES
from chaos.faults.latency import Latency
from chaos.faults.lost_reply import LOST_REPLY_PARAMS, ZkLostReply
from chaos.faults.network import BrokerIsolate, Partition, SessionExpire, ZkIsolate
from chaos.faults.packets import Bandwidth, PacketLoss, ZkDeaf
from chaos.faults.params import ParamRule, Scalar, number, percent, positive, positive_int
from chaos.faults.power import DiskVolatile, PowerLoss
from chaos.faults.process import Bounce, Kill, Pause, Stop
from chaos.faults.request import EFFECTS, RequestFault
from chaos.faults.request_plan import ACTIONS, MAX_DELAY_MS, parse_kinds
from chaos.faults.request_plan import MAX_HOLD_S as MAX_REQUEST_HOLD_S
from chaos.faults.resources import LIMIT_MB_RULE, PERCENT_RULE, CpuStarve, MemorySqueeze
from chaos.faults.zk_reset import ZkReset
from chaos.faults.zookeeper import ZkLeaderKill, ZkPause

__all__ = [
    "FAULT_TYPES",
    "Build",
    "FaultType",
    "Rebuild",
    "check_target",
    "fault_from_json",
    "fault_type",
]

#: Builds a fault from a step: the services its role resolved to, and its params (every
#: param of the kind, checked against its rules).
Build = Callable[[tuple[str, ...], Mapping[str, Scalar]], Fault]
#: Rebuilds a fault from its `describe()` JSON; `BadFaultData` when it does not.
Rebuild = Callable[[Mapping[str, Any]], Fault]


@dataclass(frozen=True, slots=True)
class FaultType:
    """One fault type: its kind name, the role classes of its targets (or the one role it
    acts on, `only_role`), its duration rule (`lasts`: `True`, duration > 0; `False`,
    duration 0; `None`, either), its params, its two ways to a fault, and why it acts on
    no other role class (`why_not`, added to the refusal)."""

    name: str
    targets: frozenset[RoleClass]
    lasts: bool | None
    build: Build
    rebuild: Rebuild
    params: tuple[ParamRule, ...] = ()
    only_role: str | None = None
    why_not: str = ""


def _action(value: Scalar) -> bool:
    return value in ACTIONS


def _kinds(value: Scalar) -> bool:
    if not isinstance(value, str):
        return False
    try:
        parse_kinds(value)
    except BadFaultData:
        return False
    return True


def _count(value: Scalar) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _probability(value: Scalar) -> bool:
    found = number(value)
    return found is not None and 0 < found <= 1


def _request_delay(value: Scalar) -> bool:
    return _count(value) and int(value or 0) <= MAX_DELAY_MS


def _request_hold(value: Scalar) -> bool:
    found = number(value)
    return found is not None and 0 < found <= MAX_REQUEST_HOLD_S


def _integer(value: Scalar) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _clock_action(value: Scalar) -> bool:
    return value in CLOCK_ACTIONS


def _offset(value: Scalar) -> bool:
    return _integer(value) and abs(int(value or 0)) <= MAX_OFFSET_MS


def _period(value: Scalar) -> bool:
    return _integer(value) and MIN_PERIOD_MS <= int(value or 0) <= MAX_PERIOD_MS


def _clock(targets: tuple[str, ...], p: Mapping[str, Scalar]) -> Fault:
    return ClockFault(
        targets, str(p["action"]), int(_float(p, "offset_ms")),
        int(_float(p, "other_offset_ms")), int(_float(p, "period_ms")), _float(p, "factor"),
    )  # fmt: skip


def _request(targets: tuple[str, ...], p: Mapping[str, Scalar]) -> Fault:
    return RequestFault(
        targets, str(p["action"]), str(p["kinds"]), int(_float(p, "count")),
        _float(p, "probability"), int(_float(p, "delay_ms")), _float(p, "hold_s"),
        int(_float(p, "seed")), str(p["effect"]),
    )  # fmt: skip


def _grudge(value: Scalar) -> bool:
    return value in GRUDGES


def _float(params: Mapping[str, Scalar], name: str) -> float:
    found = number(params[name])
    if found is None:
        raise BadFaultData(f"{name} must be a number, got {params[name]!r}")
    return float(found)


def _seed(data: Mapping[str, Any]) -> int | None:
    seed = data.get("seed")
    return None if seed is None else int(seed)


def _targeted(make: Callable[[tuple[str, ...]], Fault], kind: str) -> Rebuild:
    """The rebuild of a kind whose description holds its targets and nothing it needs."""
    return lambda data: make(targets_from(data, kind))


def _declared(kind: type[DiskFault | CertRotation], on: frozenset[RoleClass], lasts: bool,
              only: str | None = None) -> FaultType:  # fmt: skip
    """A kind whose class declares its params and builds itself from them."""
    return FaultType(kind.KIND, on, lasts, kind.from_params, kind.from_json, kind.PARAMS, only)


_B = frozenset({RoleClass.BROKERS})
_Z = frozenset({RoleClass.ZOOKEEPER})
_BZ = _B | _Z
_ANYWHERE = frozenset(RoleClass)

FAULT_TYPES: Mapping[str, FaultType] = {
    k.name: k
    for k in (
        FaultType("kill", _BZ, True, lambda t, p: Kill(t), Kill.from_json),
        FaultType(
            "stop",
            _BZ,
            True,
            lambda t, p: Stop(t, _float(p, "timeout_s")),
            Stop.from_json,
            (ParamRule("timeout_s", 30, positive, "> 0"),),
        ),
        FaultType("pause", _BZ, True, lambda t, p: Pause(t), Pause.from_json),
        FaultType("bounce", _B, False, lambda t, p: Bounce(t), Bounce.from_json),
        FaultType(
            "zk-leader-kill",
            _Z,
            True,
            lambda t, p: ZkLeaderKill(t),
            ZkLeaderKill.from_json,
            only_role="zk-leader",
        ),
        FaultType("zk-pause", _Z, True, lambda t, p: ZkPause(t), ZkPause.from_json),
        FaultType(
            "partition",
            _ANYWHERE,
            True,
            lambda t, p: Partition(t, str(p["grudge"])),
            lambda d: Partition(targets_from(d, "partition"), str(d.get("grudge", "")), _seed(d)),
            (ParamRule("grudge", "halves", _grudge, "|".join(GRUDGES)),),
        ),
        FaultType(
            "zk-isolate", _B, True, lambda t, p: ZkIsolate(t), _targeted(ZkIsolate, "zk-isolate")
        ),
        FaultType("zk-deaf", _B, True, lambda t, p: ZkDeaf(t), _targeted(ZkDeaf, "zk-deaf")),
        FaultType(
            "zk-lost-reply",
            _B,
            False,
            ZkLostReply.from_params,
            ZkLostReply.from_json,
            LOST_REPLY_PARAMS,
        ),
        FaultType("zk-reset", _B, False, lambda t, p: ZkReset(t), _targeted(ZkReset, "zk-reset")),
        FaultType(
            "broker-isolate",
            _B,
            True,
            lambda t, p: BrokerIsolate(t),
            _targeted(BrokerIsolate, "broker-isolate"),
        ),
        FaultType(
            "session-expire",
            _B,
            None,
            lambda t, p: SessionExpire(t),
            lambda d: SessionExpire(
                targets_from(d, "session-expire"),
                float(d.get("expire_deadline_s", 30.0)),
                float(d.get("register_deadline_s", 60.0)),
            ),
        ),
        FaultType(
            "loss",
            _B,
            True,
            lambda t, p: PacketLoss(t, _float(p, "percent")),
            lambda d: PacketLoss(targets_from(d, "loss"), float(d.get("percent", 20))),
            (ParamRule("percent", 20, percent, "in (0, 100]"),),
        ),
        FaultType(
            "bandwidth",
            _B,
            True,
            lambda t, p: Bandwidth(t, int(_float(p, "rate_kbit"))),
            lambda d: Bandwidth(targets_from(d, "bandwidth"), int(d.get("rate_kbit", 256))),
            (ParamRule("rate_kbit", 256, positive_int, "an integer > 0"),),
        ),
        FaultType(
            "latency",
            _B,
            True,
            lambda t, p: Latency(t, int(_float(p, "delay_ms"))),
            lambda d: Latency(targets_from(d, "latency"), int(d.get("delay_ms", 100))),
            (ParamRule("delay_ms", 100, positive_int, "an integer > 0"),),
        ),
        FaultType(
            "request",
            _B,
            True,
            _request,
            RequestFault.from_json,
            (
                ParamRule("action", "duplicate", _action, "|".join(ACTIONS)),
                ParamRule("kinds", "all", _kinds, "all, or kinds joined by commas"),
                ParamRule("count", 1, _count, "an integer >= 0 (0: no limit)"),
                ParamRule("probability", 1.0, _probability, "in (0, 1]"),
                ParamRule("delay_ms", 2000, _request_delay, f"an integer in [0, {MAX_DELAY_MS}]"),
                ParamRule("hold_s", 30.0, _request_hold, f"in (0, {MAX_REQUEST_HOLD_S:g}]"),
                ParamRule("seed", 0, _integer, "an integer"),
                ParamRule("effect", "acted", EFFECTS.__contains__, "|".join(EFFECTS)),
            ),
        ),
        FaultType(
            "cpu-starve",
            _BZ,
            True,
            lambda t, p: CpuStarve(t, _float(p, "percent")),
            CpuStarve.from_json,
            (PERCENT_RULE,),
        ),
        FaultType(
            "memory-squeeze",
            _BZ,
            True,
            lambda t, p: MemorySqueeze(t, int(_float(p, "limit_mb"))),
            MemorySqueeze.from_json,
            (LIMIT_MB_RULE,),
        ),
        FaultType(
            "clock",
            _BZ,
            None,
            _clock,
            ClockFault.from_json,
            (
                ParamRule("action", "bump", _clock_action, "|".join(CLOCK_ACTIONS)),
                ParamRule("offset_ms", 60_000, _offset, f"an integer within +-{MAX_OFFSET_MS}"),
                ParamRule("other_offset_ms", 0, _offset, f"an integer within +-{MAX_OFFSET_MS}"),
                ParamRule(
                    "period_ms", 1000, _period, f"an integer in [{MIN_PERIOD_MS}, {MAX_PERIOD_MS}]"
                ),
                FACTOR_RULE,
            ),
        ),
        *(_declared(kind, _B, True) for kind in (DiskEio, DiskSlow, DiskFull, DiskVolatile)),
        FaultType(
            "power-loss", _B, False, lambda t, p: PowerLoss(t), _targeted(PowerLoss, "power-loss")
        ),
        _declared(CertRotation, _ANYWHERE, False, "all"),
    )
}


def fault_type(name: object) -> FaultType:
    """The fault type called `name`; `UnknownKind` (a schedule error) if there is none."""
    kind = FAULT_TYPES.get(name) if isinstance(name, str) else None
    if kind is None:
        raise UnknownKind(f"unknown fault kind {name!r}; kinds are {', '.join(FAULT_TYPES)}")
    return kind


def check_target(kind: FaultType, target: object) -> None:
    """Raise `UnknownRole` unless `target` is a role this fault type can act on."""
    role = parse_role(target)
    if kind.only_role is not None and role.text != kind.only_role:
        raise UnknownRole(f"{kind.name} acts on {kind.only_role} only, not on {role.text!r}")
    if role.role_class not in kind.targets:
        wanted = " or ".join(sorted(c.value for c in kind.targets))
        why = f" ({kind.why_not})" if kind.why_not else ""
        raise UnknownRole(f"{kind.name} acts on {wanted}, not on role {role.text!r}{why}")


def fault_from_json(kind: str, data: Mapping[str, Any]) -> Fault:
    """Rebuild a fault of `kind` from its `describe()` output; `BadFaultData` (a fault
    error) for an unknown kind or a description that does not rebuild one."""
    found = FAULT_TYPES.get(kind)
    if found is None:
        raise BadFaultData(f"unknown fault kind {kind!r}; known: {', '.join(FAULT_TYPES)}")
    if not isinstance(data, Mapping):
        raise BadFaultData(f"{kind}: a fault description must be a JSON object, got {data!r}")
    return found.rebuild(data)
