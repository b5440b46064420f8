"""Invariant 6: after the final heal the cluster converges within a bound. Pure; any thread.

A `ClusterSnapshot` is what a runner saw at one moment: the controller and its epoch
(`/controller`, `/controller_epoch`), the registered brokers, each partition's leader, ISR
(its state znode) and replicas (its topic znode), optionally the brokers that report an
active controller, and each live broker's metadata view (controller, leaders and ISRs),
with the time it was taken relative to the final heal. `problems` lists why a snapshot has
not converged; it has when there is one controller, a live broker; every partition has a
live leader and an ISR equal to its replicas; and every live broker answered with metadata
naming that controller and ZooKeeper's leader and ISR for every partition, and no other,
at ZooKeeper's leader epoch where both sides name one (snapshots of older runs do not).
`time_to_convergence` is the time from the final heal to the first converged snapshot, and
`converges_after_heal` checks it against the scenario's bound.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from domain import TopicPartition
from rundir.invariants.names import CONVERGES_AFTER_HEAL
from rundir.results import InvariantResult, Violation

__all__ = [
    "CONVERGES_AFTER_HEAL",
    "BrokerView",
    "ClusterSnapshot",
    "PartitionState",
    "ViewedPartition",
    "converges_after_heal",
    "problems",
    "time_to_convergence",
]


@dataclass(frozen=True, slots=True)
class PartitionState:
    """A partition as ZooKeeper holds it: leader and ISR (state znode), replicas (topic
    znode), and the leader epoch when known. Leader -1: none."""

    leader: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    leader_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class ViewedPartition:
    """A partition as one broker's metadata shows it (the leader epoch when known)."""

    leader: int
    isr: tuple[int, ...]
    leader_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class BrokerView:
    """One broker's metadata: the controller it names and every partition it knows."""

    controller_id: int
    partitions: Mapping[TopicPartition, ViewedPartition]


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    """The cluster at `after_heal_ms` milliseconds after the final heal (negative: before).
    `controller_id` None: `/controller` was empty. `metadata` maps each broker asked to its
    view, None when it did not answer. `active_controllers`, when measured, are the brokers
    that report themselves the active controller."""

    after_heal_ms: int
    controller_id: int | None
    controller_epoch: int
    live_brokers: frozenset[int]
    partitions: Mapping[TopicPartition, PartitionState]
    metadata: Mapping[int, BrokerView | None] = field(default_factory=dict)
    active_controllers: frozenset[int] | None = None

    def to_json(self) -> dict[str, Any]:
        """The snapshot as a JSON object (one line of `snapshots.jsonl`)."""
        return {
            "after_heal_ms": self.after_heal_ms,
            "controller_id": self.controller_id,
            "controller_epoch": self.controller_epoch,
            "live_brokers": sorted(self.live_brokers),
            "active_controllers": (
                None if self.active_controllers is None else sorted(self.active_controllers)
            ),
            "partitions": [
                {
                    "topic": tp.topic,
                    "partition": tp.partition,
                    "leader": s.leader,
                    "isr": list(s.isr),
                    "replicas": list(s.replicas),
                    **_epoch_json(s.leader_epoch),
                }
                for tp, s in sorted(self.partitions.items(), key=lambda i: _key(i[0]))
            ],
            "metadata": {
                str(broker): None if view is None else _view_json(view)
                for broker, view in sorted(self.metadata.items())
            },
        }

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> ClusterSnapshot:
        """Decode `to_json`'s object; raises `ValueError` (with the field) if it does not fit."""
        try:
            active = record.get("active_controllers")
            return cls(
                after_heal_ms=int(record["after_heal_ms"]),
                controller_id=_opt_int(record["controller_id"]),
                controller_epoch=int(record["controller_epoch"]),
                live_brokers=frozenset(int(b) for b in record["live_brokers"]),
                partitions={
                    TopicPartition(str(p["topic"]), int(p["partition"])): PartitionState(
                        int(p["leader"]),
                        _ints(p["isr"]),
                        _ints(p["replicas"]),
                        _opt_int(p.get("leader_epoch")),
                    )
                    for p in record["partitions"]
                },
                metadata={
                    int(b): None if v is None else _view_from_json(v)
                    for b, v in record.get("metadata", {}).items()
                },
                active_controllers=None if active is None else frozenset(_ints(active)),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a cluster snapshot ({type(exc).__name__}: {exc})") from None


def _key(tp: TopicPartition) -> tuple[str, int]:
    return (tp.topic, tp.partition)


def _epoch_json(epoch: int | None) -> dict[str, int]:
    return {} if epoch is None else {"leader_epoch": epoch}


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _ints(values: Iterable[Any]) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def _view_json(view: BrokerView) -> dict[str, Any]:
    return {
        "controller_id": view.controller_id,
        "partitions": [
            {
                "topic": tp.topic,
                "partition": tp.partition,
                "leader": p.leader,
                "isr": list(p.isr),
                **_epoch_json(p.leader_epoch),
            }
            for tp, p in sorted(view.partitions.items(), key=lambda i: _key(i[0]))
        ],
    }


def _view_from_json(record: Mapping[str, Any]) -> BrokerView:
    return BrokerView(
        int(record["controller_id"]),
        {
            TopicPartition(str(p["topic"]), int(p["partition"])): ViewedPartition(
                int(p["leader"]), _ints(p["isr"]), _opt_int(p.get("leader_epoch"))
            )
            for p in record["partitions"]
        },
    )


def problems(snapshot: ClusterSnapshot) -> tuple[str, ...]:
    """Why `snapshot` has not converged, one short sentence each; empty when it has."""
    out: list[str] = []
    live = snapshot.live_brokers
    controller = snapshot.controller_id
    if controller is None:
        out.append("no controller")
    elif controller not in live:
        out.append(f"controller {controller} is not a live broker")
    if snapshot.active_controllers is not None and (
        controller is None or snapshot.active_controllers != {controller}
    ):
        out.append(f"brokers {sorted(snapshot.active_controllers)} report an active controller")
    for tp, state in sorted(snapshot.partitions.items(), key=lambda i: _key(i[0])):
        if state.leader not in live:
            out.append(f"{tp} has no live leader (leader {state.leader})")
        if set(state.isr) != set(state.replicas):
            out.append(f"{tp} ISR {sorted(state.isr)} is not its replicas {sorted(state.replicas)}")
    for broker in sorted(live):
        out.extend(_view_problems(broker, snapshot))
    return tuple(out)


def _view_problems(broker: int, snapshot: ClusterSnapshot) -> list[str]:
    view = snapshot.metadata.get(broker)
    if view is None:
        return [f"broker {broker} gave no metadata"]
    out = []
    if view.controller_id != snapshot.controller_id:
        out.append(f"broker {broker} names controller {view.controller_id}")
    for tp, state in sorted(snapshot.partitions.items(), key=lambda i: _key(i[0])):
        seen = view.partitions.get(tp)
        if seen is None:
            out.append(f"broker {broker} does not know {tp}")
        elif seen.leader != state.leader or set(seen.isr) != set(state.isr):
            out.append(
                f"broker {broker} sees {tp} led by {seen.leader} with ISR {sorted(seen.isr)}, "
                f"ZooKeeper {state.leader} with {sorted(state.isr)}"
            )
        elif None not in (seen.leader_epoch, state.leader_epoch) and (
            seen.leader_epoch != state.leader_epoch
        ):
            out.append(
                f"broker {broker} sees {tp} at leader epoch {seen.leader_epoch}, "
                f"ZooKeeper at {state.leader_epoch}"
            )
    for tp in sorted(set(view.partitions) - set(snapshot.partitions), key=_key):
        out.append(f"broker {broker} knows {tp}, which ZooKeeper does not")
    return out


def time_to_convergence(snapshots: Iterable[ClusterSnapshot]) -> int | None:
    """Milliseconds from the final heal to the first converged snapshot taken at or after
    it; None when none has converged."""
    for snapshot in sorted(snapshots, key=lambda s: s.after_heal_ms):
        if snapshot.after_heal_ms >= 0 and not problems(snapshot):
            return snapshot.after_heal_ms
    return None


def converges_after_heal(snapshots: Iterable[ClusterSnapshot], bound_ms: int) -> InvariantResult:
    """Invariant 6: a snapshot taken at most `bound_ms` after the final heal has converged.
    A violation names each problem of the last snapshot before convergence (or the last
    one of all, when none converged)."""
    after = sorted((s for s in snapshots if s.after_heal_ms >= 0), key=lambda s: s.after_heal_ms)
    if not after:
        return InvariantResult(
            CONVERGES_AFTER_HEAL, note="no snapshot taken after the final heal", judged=False
        )
    took = time_to_convergence(after)
    if took is not None and took <= bound_ms:
        return InvariantResult(
            CONVERGES_AFTER_HEAL, (), len(after), f"converged {took} ms after the heal"
        )
    outcome = "never converged" if took is None else f"converged only after {took} ms"
    unconverged = [s for s in after if took is None or s.after_heal_ms < took]
    if not unconverged:  # the first snapshot came too late to tell
        explanation = f"the first snapshot after the heal was taken after the bound {bound_ms} ms"
        return InvariantResult(
            CONVERGES_AFTER_HEAL,
            (Violation(f"snapshot at +{took} ms", explanation),),
            len(after),
            outcome,
        )
    last = unconverged[-1]
    subject = f"snapshot at +{last.after_heal_ms} ms"
    violations = tuple(
        Violation(subject, f"{problem} ({outcome}; bound {bound_ms} ms)")
        for problem in problems(last)
    )
    return InvariantResult(CONVERGES_AFTER_HEAL, violations, len(after), outcome)
