"""Jepsen's Kafka queue anomalies (`jepsen.tests.kafka`) over a workload history and its
final read, per partition, each class an `InvariantResult` named as Jepsen names it, each
anomaly a `Violation` with its witness (the operations as `"<process>#<op_id>"`, the
process, the offsets and the value). Pure; any thread.

Definitions (docs/workload.md has the table; "read" is any poll's record or the final
read's):

- `inconsistent-offsets`: one offset read or acknowledged with two values. Allowed when
  one of them was an acks=1 acknowledgement.
- `duplicate`: one value read or acknowledged at two offsets. Allowed while its offsets
  do not outnumber its sends' allowance (a retried send whose unknown attempt landed).
- `lost-write`: a send acknowledged at offset a, never read, although offset b > a was.
- `unseen`: a send acknowledged before the final read began, on a partition the final
  read covers, that the final read does not hold (the count over time is in the stats).
- `G1a`: a value read although every send of it definitely failed.
- `poll-skip` / `int-poll-skip`: a consumer steps over offsets known to exist, between
  two of its polls of the partition (from where it asked to fetch) or inside one poll.
  A jump the consumer made itself (fetching somewhere else than just past its last poll:
  a seek) is allowed.
- `nonmonotonic-poll` / `int-nonmonotonic-poll`: a poll starts at or before where the
  consumer's previous poll ended (allowed after a seek), or goes back inside one poll.
- `nonmonotonic-send`: a producer's later acknowledgement on a partition at a lower or
  equal offset. Allowed when either send was acks=1.

With unclean leader election on, or a loss of acknowledged writes otherwise allowed (a
power loss under a flush policy that does not fsync every message), `lost-write`,
`unseen`, `nonmonotonic-send` and `inconsistent-offsets` are allowed (an unclean leader,
or one that lost its unsynced writes, may lose acknowledged records and hand their
offsets out again); acks=1 sends are allowed to be lost or unseen in any case. An allowed anomaly is
in a result of its class's name with `allowed` set, after the failing one.

The pass is `rundir.checker.queue_fold` (one pass, what it keeps is in its docstring);
the finishing steps here visit each partition's maps once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from rundir.checker.final_index import FinalIndex
from rundir.checker.index import FinalRead
from rundir.checker.queue_fold import UNBOUNDED, QueueFold, UnseenCount
from rundir.checker.queue_state import ACK_LOOSE, NONE, Found, Gap, Labels, PartitionState
from rundir.history import HistoryOp
from rundir.results import InvariantResult, Violation

__all__ = [
    "FINAL_READ_OP",
    "QUEUE_CLASSES",
    "UNCLEAN_ELECTION",
    "QueueParts",
    "QueuePolicy",
    "QueueVerdict",
    "queue_classes",
    "queue_parts",
    "queue_verdict",
]

#: Every class, in the order a verdict lists them.
QUEUE_CLASSES = (
    "inconsistent-offsets",
    "duplicate",
    "lost-write",
    "unseen",
    "G1a",
    "poll-skip",
    "int-poll-skip",
    "nonmonotonic-poll",
    "int-nonmonotonic-poll",
    "nonmonotonic-send",
)
#: How a witness names the final read when it was given apart from the history.
FINAL_READ_OP = "final-read"
#: How a verdict names unclean leader election as the reason losses are allowed.
UNCLEAN_ELECTION = "unclean election"


@dataclass(frozen=True, slots=True)
class QueuePolicy:
    """What the run's configuration allows: `unclean_leader_election`, or the reason in
    `acknowledged_loss_allowed` (a power loss under a flush policy that does not fsync
    every message), lets acknowledged records be lost and their offsets handed out
    again."""

    unclean_leader_election: bool = False
    acknowledged_loss_allowed: str | None = None

    @property
    def loss_allowed(self) -> str | None:
        """Why acknowledged records may be lost, as a verdict names it, or None."""
        if self.unclean_leader_election:
            return UNCLEAN_ELECTION
        return self.acknowledged_loss_allowed


@dataclass(frozen=True, slots=True)
class QueueVerdict:
    """Each class's failing result, then the allowed results that found something, and
    the measures (`stats`: the worst acknowledgement-to-first-read lag, how many times
    records were consumed, the unseen count over time)."""

    results: tuple[InvariantResult, ...]
    stats: dict[str, Any]


def queue_classes(
    history: Iterable[HistoryOp], final: FinalRead, policy: QueuePolicy | None = None
) -> QueueVerdict:
    """Every Jepsen queue class over `history` (in history order) and its `final` read,
    what `policy` allows (by default: nothing the configuration loosens) apart."""
    fold = QueueFold()
    for op in history:
        fold.feed(op)
    return queue_verdict(fold, final, policy)


def queue_verdict(
    fold: QueueFold, final: FinalRead | FinalIndex, policy: QueuePolicy | None = None
) -> QueueVerdict:
    """Every Jepsen queue class from `fold`, fed the whole history, and its `final` read."""
    return queue_parts(fold, final, policy).verdict(fold.unseen_count, fold.worst_lag)


@dataclass(slots=True)
class QueueParts:
    """What the queue classes found over some partitions, before the verdict: each class's
    failing and allowed violations with their partition's key, what was judged, the
    consumption counts and what was consumed most (`(reads, key, text)`). Parts over
    disjoint partitions `merge` into the parts of their union."""

    bad: dict[str, list[tuple[tuple[str, int], Violation]]]
    allowed: dict[str, list[tuple[tuple[str, int], Violation]]]
    checked: Counter[str] = field(default_factory=Counter)
    consumed: Counter[int] = field(default_factory=Counter)
    notes: Counter[str] = field(default_factory=Counter)
    most: tuple[int, tuple[str, int], str] = (0, ("", 0), "")

    @classmethod
    def empty(cls) -> QueueParts:
        """No partition yet."""
        return cls({n: [] for n in QUEUE_CLASSES}, {n: [] for n in QUEUE_CLASSES})

    def merge(self, other: QueueParts) -> None:
        """Add the parts of other partitions."""
        for mine, theirs in ((self.bad, other.bad), (self.allowed, other.allowed)):
            for name in QUEUE_CLASSES:
                mine[name].extend(theirs[name])
        self.checked.update(other.checked)
        self.consumed.update(other.consumed)
        self.notes.update(other.notes)
        if other.most[0] > self.most[0] or (
            other.most[0] == self.most[0] and other.most[0] and other.most[1] < self.most[1]
        ):
            self.most = other.most

    def verdict(
        self, unseen: UnseenCount, worst_lag: tuple[int, str, str, str, str] | None
    ) -> QueueVerdict:
        """The verdict, its violations in partition order, with the unseen count over the
        whole history and the worst lag."""
        bad = {n: _in_partition_order(self.bad[n]) for n in QUEUE_CLASSES}
        allowed = {n: _in_partition_order(self.allowed[n]) for n in QUEUE_CLASSES}
        results = [
            InvariantResult(name, bad[name], self.checked[name], _note(name, self.notes))
            for name in QUEUE_CLASSES
        ]
        results.extend(
            InvariantResult(name, allowed[name], len(allowed[name]), allowed=True)
            for name in QUEUE_CLASSES
            if allowed[name]
        )
        stats = _stats(unseen, worst_lag, self.consumed)
        if self.most[0]:
            stats["consumed_most"] = f"{self.most[2]} {self.most[0]} times"
        return QueueVerdict(tuple(results), stats)


def _in_partition_order(
    found: list[tuple[tuple[str, int], Violation]],
) -> tuple[Violation, ...]:
    """The violations by partition, each partition's in the order found (a stable sort)."""
    return tuple(v for _, v in sorted(found, key=itemgetter(0)))


def queue_parts(
    fold: QueueFold, final: FinalRead | FinalIndex, policy: QueuePolicy | None = None
) -> QueueParts:
    """What `fold`, fed the history of its partitions, and their `final` read found."""
    policy = policy or QueuePolicy()
    fold.open_sends()
    covered = {(tp.topic, tp.partition) for tp in final.partitions}
    for tp, records in final.partitions.items():
        fold.final((tp.topic, tp.partition), records, FINAL_READ_OP)
    parts = QueueParts.empty()
    loss_allowed = policy.loss_allowed is not None
    bad, allowed, consumed = parts.bad, parts.allowed, parts.consumed
    for key in sorted(fold.partitions):
        state = fold.partitions[key]
        subject = f"{key[0]}-{key[1]}"
        _finish(state, fold.labels, key in covered, final.started_ns, policy, parts.notes)
        parts.checked.update(state.checked)
        for name, found in state.found.items():
            loosened = name == "nonmonotonic-send" and loss_allowed
            for f in found:
                (allowed if f.allowed or loosened else bad)[name].append(
                    (key, _violation(subject, f))
                )
        for f in state.inconsistent.values():
            loose = f.allowed or loss_allowed
            (allowed if loose else bad)["inconsistent-offsets"].append(
                (key, _violation(subject, f))
            )
        for slot, (sent, reads) in enumerate(zip(state.sent, state.reads, strict=True)):
            if sent:
                consumed[reads] += 1
                if reads > parts.most[0]:
                    parts.most = (reads, key, f"{subject} {state.names[slot]!r}")
    return parts


def _finish(
    state: PartitionState,
    labels: Labels,
    covered: bool,
    started_ns: int,
    policy: QueuePolicy,
    notes: Counter[str],
) -> None:
    """The checks that need the whole pass: duplicates, lost and unseen writes, G1a and
    the confirmation of the gaps."""
    losses_allowed = policy.loss_allowed is not None
    text = labels.text
    if state.known:
        state.count("inconsistent-offsets", state.known)
    state.count("duplicate", len(state.names))
    for slot in sorted({*state.more, *state.failed}):
        value, allowance = state.names[slot], state.allowance[slot]
        first_read = text(state.first_read[slot]) if state.first_read[slot] >= 0 else None
        offsets = tuple(state.offsets(slot))
        if slot in state.more:
            ack = text(state.ack[slot]) if state.ack[slot] >= 0 else None
            many = "any number of" if allowance >= UNBOUNDED else str(allowance)
            state.add(
                "duplicate",
                Found(
                    value,
                    offsets,
                    None,
                    tuple(op for op in (ack, first_read) if op),
                    f"at {len(offsets)} offsets; its sends may have written it {many} times",
                    allowed=allowance >= len(offsets),
                ),
            )
        failed = state.failed.get(slot)
        if failed is None:
            continue
        state.count("G1a")
        read = first_read is not None or state.in_final[slot]
        if allowance == 0 and state.sent[slot] and read:
            state.add(
                "G1a",
                Found(
                    value,
                    offsets,
                    None,
                    (text(failed), first_read or FINAL_READ_OP),
                    f"read, but {text(failed)} definitely failed to send it",
                ),
            )
    judged = 0  # acknowledged values the final read holds: judged, nothing found
    in_final, ack_ns = state.in_final, state.ack_ns
    for slot, code in enumerate(state.ack):
        if code >= 0:
            if covered and in_final[slot] and ack_ns[slot] < started_ns:
                judged += 1  # `_acknowledged`, inline for the common case
            else:
                _acknowledged(state, slot, code, labels, covered, started_ns, losses_allowed, notes)
    if judged:
        state.count("unseen", judged)
    for gap in state.gaps:
        _confirm(state, gap)


def _acknowledged(
    state: PartitionState,
    slot: int,
    code: int,
    labels: Labels,
    covered: bool,
    started_ns: int,
    losses_allowed: bool,
    notes: Counter[str],
) -> None:
    """`lost-write` and `unseen` for the acknowledged value of `slot`, acknowledged by
    the operation of code `code` (named only in what is found: most are not)."""
    value, ack_offset = state.names[slot], state.acked_at(slot)
    in_final = state.in_final[slot]
    read = state.first_read[slot] >= 0 or in_final
    loose = losses_allowed or bool(state.ack_flags[slot] & ACK_LOOSE)
    if ack_offset != NONE and not read:
        state.count("lost-write")
        if ack_offset < state.max_read:
            state.add(
                "lost-write",
                Found(
                    value,
                    (ack_offset, state.max_read),
                    None,
                    (labels.text(code), state.max_read_op),
                    f"acknowledged at {ack_offset}, never read; "
                    f"{state.max_read_op} read offset {state.max_read}",
                    allowed=loose,
                ),
            )
    if not covered or state.ack_ns[slot] >= started_ns:
        notes["unseen"] += 1
        return
    state.count("unseen")
    if not in_final:
        state.add(
            "unseen",
            Found(
                value,
                (ack_offset,) if ack_offset != NONE else (),
                None,
                (labels.text(code),),
                "acknowledged, not in the final read (the last read)",
                allowed=loose,
            ),
        )


def _confirm(state: PartitionState, gap: Gap) -> None:
    """Report `gap` when some offset inside it is known to hold a record."""
    held = state.held(gap.after, gap.before)
    if not held:
        return
    name = "int-poll-skip" if gap.kind == "inside" else "poll-skip"
    ops = (gap.previous, gap.poll) if gap.previous else (gap.poll,)
    how = f"asked for {gap.after + 1}, " if gap.kind == "fetch" else ""
    values = [state.names[state.first_at(o)[0]] for o in held[:3]]  # type: ignore[index]
    shown = ", ".join(f"{o}={v!r}" for o, v in zip(held, values, strict=False))
    more = f" and {len(held) - 3} more" if len(held) > 3 else ""
    state.add(
        name,
        Found(
            values[0],
            tuple(held[:10]),
            gap.process,
            ops,
            f"{how}stepped from {gap.after} to {gap.before} over {shown}{more}"
            + (" (after the consumer's own seek)" if gap.allowed else ""),
            allowed=gap.allowed,
        ),
    )


def _violation(subject: str, found: Found) -> Violation:
    return Violation(
        subject,
        found.explanation,
        value=found.value,
        offsets=found.offsets,
        process=found.process,
        ops=found.ops,
    )


def _note(name: str, notes: Counter[str]) -> str:
    """What the class left out."""
    if name == "unseen" and notes["unseen"]:
        return (
            f"not judged: {notes['unseen']} acknowledged after the final read began "
            "or on partitions it did not cover"
        )
    return ""


def _stats(
    unseen: UnseenCount,
    worst_lag: tuple[int, str, str, str, str] | None,
    consumed: Counter[int],
) -> dict[str, Any]:
    stats: dict[str, Any] = {
        "consumed": {str(k): consumed[k] for k in sorted(consumed)},
        "unseen_max": unseen.unseen_max,
        "unseen_end": unseen.unseen,
        "unseen_over_time": [list(s) for s in unseen.samples],
    }
    if worst_lag is not None:
        lag, tp, value, ack, read = worst_lag
        stats["worst_lag_ns"] = lag
        stats["worst_lag_ms"] = round(lag / 1e6, 3)
        stats["worst_lag"] = f"{tp} {value!r}: acknowledged by {ack}, first read by {read}"
    return stats
