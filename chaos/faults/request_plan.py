"""What the `request` fault does to which control request: its plan (`RequestPlan`: the
action, the kinds it acts on, how many and with what probability) and the proxy's pure
decisions (`Decider`), kept apart from the proxy's I/O so that they can be tested alone.

What the proxy does to a chosen request, by action:

- `drop`: never delivers it; the controller is answered `UNAVAILABLE` (a lost connection)
  and resends it after its back-off;
- `delay`: delivers it `delay_ms` late, and answers with the broker's answer;
- `duplicate`: delivers it and answers; delivers it again `delay_ms` later;
- `reorder`: answers it at once with a success and holds it; delivers it right after the
  next request of the same kind about one of its partitions has passed (any next one of
  its kind when it names no partition), or after `hold_s` when none comes: so the held
  request arrives after a newer one about the same partition, and must be fenced.

A request is chosen when its kind is among `kinds`, fewer than `count` requests have been
chosen (`count` 0: no limit) and a draw of the plan's seeded generator falls below
`probability`. While a `reorder` holds a request of a kind, no request of that kind is
chosen: each passes, and the first about one of the held request's partitions takes the
held one after it.

`stale_partitions` names, for a late delivery, the partitions whose leader epoch is not
newer than one the proxy already delivered to the broker in a LeaderAndIsr: the broker
must fence them. Only a LeaderAndIsr sets the epoch a broker holds for a partition
(`delivered_epochs`): an UpdateMetadata or StopReplica with epoch N leaves a broker that
never got N in a LeaderAndIsr right to obey a late LeaderAndIsr of epoch N. A StopReplica
that deleted a partition (answered without an error) makes the broker forget it, as
Kafka 2.x's does (`forget_deleted`): a late LeaderAndIsr of any epoch then creates the
replica again, in Kafka too, so the partition's delivered epoch is forgotten with it. A
late copy that crossed such a StopReplica on its way (`raced_deletion`) may have reached
the broker before or after it: it is not judged for that partition.

Pure; one decider is used from one thread (the proxy's event loop).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

from chaos.faults.fields import BadFaultData

__all__ = [
    "ACTIONS",
    "EPOCH_SETTING_KIND",
    "KINDS",
    "Decider",
    "Decision",
    "RequestPlan",
    "delivered_epochs",
    "forget_deleted",
    "parse_kinds",
    "raced_deletion",
    "stale_partitions",
]

#: The control requests the proxy may act on (Kafka's API names).
KINDS = ("LeaderAndIsr", "UpdateMetadata", "StopReplica")
#: What it may do to one.
ACTIONS = ("drop", "delay", "duplicate", "reorder")
#: The longest delay, second delivery or hold.
MAX_DELAY_MS = 60_000
MAX_HOLD_S = 120.0


def parse_kinds(text: str) -> tuple[str, ...]:
    """`"LeaderAndIsr,StopReplica"` -> the kinds, in `KINDS` order; `"all"` is every kind.
    `BadFaultData` for an empty list or an unknown kind."""
    if text.strip() == "all":
        return KINDS
    named = {k.strip() for k in text.split(",") if k.strip()}
    unknown = sorted(named - set(KINDS))
    if not named or unknown:
        raise BadFaultData(
            f"request: kinds must be `all` or a comma-separated list of {', '.join(KINDS)}; "
            f"got {text!r}"
        )
    return tuple(k for k in KINDS if k in named)


@dataclass(frozen=True, slots=True)
class RequestPlan:
    """The action and the selection of the `request` fault (module docstring)."""

    action: str
    kinds: tuple[str, ...] = KINDS
    count: int = 1
    probability: float = 1.0
    delay_ms: int = 2000
    hold_s: float = 30.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise BadFaultData(f"request: action must be one of {ACTIONS}, got {self.action!r}")
        if not self.kinds or any(k not in KINDS for k in self.kinds):
            raise BadFaultData(f"request: kinds must be among {KINDS}, got {self.kinds!r}")
        if not _is_int(self.count) or self.count < 0:
            raise BadFaultData(f"request: count must be an integer >= 0, got {self.count!r}")
        if not _is_number(self.probability) or not 0 < self.probability <= 1:
            raise BadFaultData(f"request: probability must be in (0, 1], got {self.probability!r}")
        if not _is_int(self.delay_ms) or not 0 <= self.delay_ms <= MAX_DELAY_MS:
            raise BadFaultData(
                f"request: delay_ms must be an integer in [0, {MAX_DELAY_MS}], "
                f"got {self.delay_ms!r}"
            )
        if not _is_number(self.hold_s) or not 0 < self.hold_s <= MAX_HOLD_S:
            raise BadFaultData(
                f"request: hold_s must be in (0, {MAX_HOLD_S:g}], got {self.hold_s!r}"
            )
        if not _is_int(self.seed):
            raise BadFaultData(f"request: seed must be an integer, got {self.seed!r}")

    def as_args(self) -> list[str]:
        """The proxy's command-line arguments for this plan."""
        return [
            "--action", self.action, "--kinds", ",".join(self.kinds), "--count",
            str(self.count), "--probability", repr(float(self.probability)), "--delay-ms",
            str(self.delay_ms), "--hold-s", repr(float(self.hold_s)), "--seed", str(self.seed),
        ]  # fmt: skip


class Decision(Enum):
    """What the proxy does with one request."""

    PASS = "pass"
    """deliver it and answer with the broker's answer"""
    DROP = "drop"
    DELAY = "delay"
    DUPLICATE = "duplicate"
    HOLD = "hold"
    """answer at once, keep it for after the next of its kind"""
    PASS_THEN_RELEASE = "pass-then-release"
    """deliver it, then the request of its kind held before it"""


_ACTION_DECISIONS = {
    "drop": Decision.DROP,
    "delay": Decision.DELAY,
    "duplicate": Decision.DUPLICATE,
    "reorder": Decision.HOLD,
}


class Decider:
    """The proxy's choices over the requests it sees, in order (module docstring)."""

    def __init__(self, plan: RequestPlan) -> None:
        self._plan = plan
        self._random = random.Random(plan.seed)
        self._chosen = 0
        self._held: dict[str, frozenset[tuple[str, int]]] = {}

    @property
    def chosen(self) -> int:
        """How many requests were chosen so far."""
        return self._chosen

    def decide(self, kind: str, partitions: Iterable[tuple[str, int]] = ()) -> Decision:
        """The decision for the next request of `kind`, about `partitions`."""
        named = frozenset(partitions)
        if kind in self._held:
            held = self._held[kind]
            if held and not held & named:
                return Decision.PASS
            del self._held[kind]
            return Decision.PASS_THEN_RELEASE
        plan = self._plan
        if kind not in plan.kinds or (plan.count and self._chosen >= plan.count):
            return Decision.PASS
        if self._random.random() >= plan.probability:
            return Decision.PASS
        self._chosen += 1
        decision = _ACTION_DECISIONS[plan.action]
        if decision is Decision.HOLD:
            self._held[kind] = named
        return decision

    def release(self, kind: str) -> bool:
        """Give up waiting for the next request of `kind` (the hold ran out); whether one
        was held."""
        return self._held.pop(kind, None) is not None


#: The kind whose delivery sets the leader epoch a broker holds for a partition.
EPOCH_SETTING_KIND = "LeaderAndIsr"


def delivered_epochs(
    delivered: Mapping[tuple[str, int], int], kind: str, partitions: Iterable[tuple[str, int, int]]
) -> dict[tuple[str, int], int]:
    """`delivered` (the newest leader epoch delivered per partition) after a request of
    `kind` about `partitions` (`(topic, partition, leader_epoch)`) was delivered: raised
    for a LeaderAndIsr, unchanged for the other kinds."""
    found = dict(delivered)
    if kind != EPOCH_SETTING_KIND:
        return found
    for topic, partition, epoch in partitions:
        if epoch >= 0 and epoch > found.get((topic, partition), -1):
            found[(topic, partition)] = epoch
    return found


def forget_deleted(
    delivered: Mapping[tuple[str, int], int], deleted: Iterable[tuple[str, int]]
) -> dict[tuple[str, int], int]:
    """`delivered` without the partitions a StopReplica deleted on the broker (the module
    docstring says why)."""
    found = dict(delivered)
    for tp in deleted:
        found.pop(tp, None)
    return found


#: A deletion's span at the proxy: when the StopReplica was sent, and when its answer came
#: (None while it is in flight).
DeletionSpan = tuple[float, float | None]


def raced_deletion(
    stale: Iterable[tuple[str, int, int]],
    deletions: Mapping[tuple[str, int], DeletionSpan],
    sent: float,
    answered: float,
) -> list[tuple[str, int, int]]:
    """Of a late copy's `stale` partitions (sent at `sent`, answered at `answered`), those a
    StopReplica deleting the partition was in flight with: sent before the copy's answer
    and answered after it was sent, or not yet. The broker may have applied the two in
    either order, so the copy is not judged for them."""
    return [
        (topic, partition, epoch)
        for topic, partition, epoch in stale
        if (span := deletions.get((topic, partition))) is not None
        and span[0] < answered
        and (span[1] is None or span[1] > sent)
    ]


def stale_partitions(
    partitions: Iterable[tuple[str, int, int]], delivered: Mapping[tuple[str, int], int]
) -> list[tuple[str, int, int]]:
    """The `(topic, partition, leader_epoch)` of a request whose epoch is not newer than the
    newest `delivered` before for that partition (StopReplica's -1 and -2 are never stale:
    they carry no epoch)."""
    return [
        (topic, partition, epoch)
        for topic, partition, epoch in partitions
        if epoch >= 0 and (topic, partition) in delivered and epoch <= delivered[(topic, partition)]
    ]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
