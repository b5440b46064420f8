"""`SimCluster`: one synthetic run's 3-broker cluster as its nodes log it (docs/events.md),
for `pipeline.synthetic`. It keeps the state the logs must agree on (live brokers and
their broker epochs, the controller and its epoch, each partition's leader, leader epoch,
ISR and zkVersion) and appends each node's events: registrations, controller failovers
with their steps, control requests with the brokers' `request_accepted` and the
controller's responses, leader elections, a topic's creation, and ISR shrinks and
expands under load. Seeded; the calling thread. For benchmarks and tests only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from eventlog import (
    BrokerRegistered,
    ControllerElected,
    ControllerFailoverDone,
    ControllerFailoverStep,
    ControlRequestSent,
    ControlResponseReceived,
    Event,
    IsrChanged,
    IsrChangeHandled,
    IsrChangePropagated,
    LeaderElected,
    PartitionStateChange,
    ReplicaStateChange,
    RequestAccepted,
    TopicChange,
)
from pipeline.run_writer import event

__all__ = ["BROKERS", "FAILOVER_STEPS", "SimCluster", "SimPartition"]

BROKERS = (1, 2, 3)
FAILOVER_STEPS = (
    "watches_registered",
    "notifications_removed",
    "context_initialized",
    "update_metadata_sent",
    "state_machines_started",
    "reassignments_resumed",
    "deletions_resumed",
    "preferred_elections_done",
)


@dataclass
class SimPartition:
    leader: int
    epoch: int
    isr: list[int]
    version: int
    replicas: tuple[int, ...]


class SimCluster:
    """One run's cluster as its nodes log it: the state and the per-node event lines."""

    def __init__(self, rng: random.Random, topic: str, partitions: int) -> None:
        self.rng = rng
        self.topic = topic
        self.logs: dict[int, list[tuple[int, int, dict[str, Any]]]] = {b: [] for b in BROKERS}
        self._seq = 0
        self.live: set[int] = set()
        self.broker_epoch = dict.fromkeys(BROKERS, 0)
        self._czxid = 100
        self.controller = 0
        self.epoch = 0
        self.parts = {
            p: SimPartition(0, -1, [], -1, tuple(BROKERS[(p + i) % 3] for i in range(3)))
            for p in range(partitions)
        }
        #: partition -> [from, to) intervals without a live leader
        self.down: dict[int, list[tuple[int, int]]] = {p: [] for p in range(partitions)}

    def emit(self, ts: int, broker: int, written: Event) -> None:
        """`broker` writes `written` at `ts`."""
        self._seq += 1
        self.logs[broker].append((ts, self._seq, event(ts, f"broker{broker}", written)))

    def lag(self, low: int = 1, high: int = 25) -> int:
        return self.rng.randint(low, high)

    def register(self, ts: int, b: int, previous: int = -1) -> None:
        self._czxid += self.rng.randint(3, 40)
        self.broker_epoch[b] = self._czxid
        self.live.add(b)
        self.emit(
            ts,
            b,
            BrokerRegistered(
                broker_id=b,
                broker_epoch=self._czxid,
                previous_broker_epoch=previous,
                reregistration=previous != -1,
                session_id=f"0x{self.rng.getrandbits(40):x}",
            ),
        )

    def send(self, ts: int, api: str, brokers: set[int], partitions: int) -> int:
        """The controller queues `api` for `brokers`; they apply it; it hears back."""
        last = ts
        for b in sorted(brokers):
            c, e, epoch = self.controller, self.epoch, self.broker_epoch[b]
            self.emit(
                ts,
                c,
                ControlRequestSent(
                    api=api,
                    broker_id=b,
                    controller_epoch=e,
                    broker_epoch=epoch,
                    partitions=partitions,
                ),
            )
            applied = ts + self.lag()
            self.emit(
                applied,
                b,
                RequestAccepted(
                    api=api,
                    controller_id=c,
                    controller_epoch=e,
                    request_broker_epoch=epoch,
                    broker_epoch=epoch,
                    partitions=partitions,
                    partition_errors=0,
                ),
            )
            last = max(last, applied + 1)
            self.emit(
                applied + 1,
                c,
                ControlResponseReceived(
                    api=api, broker_id=b, controller_epoch=e, error="NONE", partition_errors=0
                ),
            )
        return last

    def failover(self, ts: int, c: int) -> int:
        self.controller, self.epoch = c, self.epoch + 1
        e = self.epoch
        self.emit(
            ts,
            c,
            ControllerElected(
                controller_id=c, controller_epoch=e, epoch_zk_version=e, epoch_zxid=None
            ),
        )
        at = ts
        for step in FAILOVER_STEPS:
            at += self.lag(1, 12)
            if step == "update_metadata_sent":
                self.send(at, "UpdateMetadata", self.live, len(self.parts))
            self.emit(at, c, ControllerFailoverStep(step=step, controller_epoch=e))
        done = at + self.lag(1, 5)
        self.emit(
            done,
            c,
            ControllerFailoverDone(
                controller_epoch=e,
                brokers=len(self.live),
                topics=1 if self.parts[0].version >= 0 else 0,
                partitions=len(self.parts) if self.parts[0].version >= 0 else 0,
                offline_partitions=0,
                duration_ms=float(done - ts),
            ),
        )
        return done

    def write_state(self, ts: int, p: int, leader: int, isr: list[int], strategy: str) -> None:
        part = self.parts[p]
        part.leader, part.epoch, part.isr, part.version = (
            leader,
            part.epoch + 1,
            isr,
            part.version + 1,
        )
        self.emit(
            ts,
            self.controller,
            LeaderElected(
                topic=self.topic,
                partition=p,
                leader=leader,
                leader_epoch=part.epoch,
                isr=isr,
                zk_version=part.version,
                controller_epoch=self.epoch,
                strategy=strategy,
                unclean=False,
                zxid=None,
            ),
        )

    def partitions_moved(self, ts: int, target: str) -> None:
        n = len(self.parts)
        self.emit(
            ts,
            self.controller,
            PartitionStateChange(target=target, partitions=n, failed=0, topics=[self.topic]),
        )

    def create_topic(self, ts: int) -> int:
        c = self.controller
        self.emit(ts, c, TopicChange(added=[self.topic], removed=[], refused={}))
        n = len(self.parts)
        self.partitions_moved(ts + 1, "NewPartition")
        for b in BROKERS:
            self.emit(
                ts + 2,
                c,
                ReplicaStateChange(broker_id=b, target="NewReplica", replicas=n, failed=0),
            )
        for p, part in self.parts.items():
            self.write_state(ts + 3, p, part.replicas[0], list(part.replicas), "initial")
        self.partitions_moved(ts + 4, "OnlinePartition")
        done = self.send(ts + 5, "LeaderAndIsr", self.live, n)
        return self.send(done, "UpdateMetadata", self.live, n)

    def isr_change(self, ts: int, p: int, isr: list[int], reason: str) -> int:
        """The leader writes a new ISR and propagates it; the controller tells everyone."""
        part = self.parts[p]
        old, part.isr, part.version = part.isr, isr, part.version + 1
        self.emit(
            ts,
            part.leader,
            IsrChanged(
                topic=self.topic,
                partition=p,
                reason=reason,
                leader=part.leader,
                leader_epoch=part.epoch,
                old_isr=old,
                isr=isr,
                zk_version=part.version,
                high_watermark=self.rng.randint(0, 5000),
            ),
        )
        self.emit(
            ts + 1,
            part.leader,
            IsrChangePropagated(
                notification=f"/isr_change_notification/isr_change_{self._seq:010d}", partitions=1
            ),
        )
        handled = ts + self.lag(20, 200)
        self.emit(
            handled,
            self.controller,
            IsrChangeHandled(notifications=1, partitions=1, controller_epoch=self.epoch),
        )
        return self.send(handled + 1, "UpdateMetadata", self.live, 1)

    def churn(self, ts: int) -> int:
        """A follower falls out of an ISR under load and catches up again; the end."""
        candidates = [p for p, part in self.parts.items() if len(part.isr) == 3]
        if not candidates:
            return ts
        p = self.rng.choice(candidates)
        part = self.parts[p]
        follower = self.rng.choice([b for b in part.isr if b != part.leader])
        at = self.isr_change(ts, p, [b for b in part.isr if b != follower], "shrink")
        return self.isr_change(at + self.lag(500, 3000), p, sorted([*part.isr, follower]), "expand")
