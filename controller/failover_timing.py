"""`python -m controller.failover_timing`: the controller's own work in a failover after
kill -9, in-process, without ZooKeeper or brokers, against a plain pass over the same
partitions.

    python -m controller.failover_timing --partitions 10000 [--topics 100] [--runs 3]

The cluster is the benchmarks' (`bench.control.layout`): `--partitions` partitions in
`--topics` topics on brokers 1..3, replicas round robin, every partition led by its first
replica with its full ISR at leader epoch 0. Broker 1, the killed controller, is dead;
brokers 2 and 3 are live. The new controller's context holds every assignment and state,
as `initializeControllerContext` leaves it, and its state machines write through
`FakePartitionZk` (state znodes in a dict, epoch-fenced) and hand their requests to a
send that only counts them. Events go to a real event log in a temporary directory, and
the cyclic garbage collector is off, as `--gc-pause-during-changes` has it. Timed, as
`ActiveController.on_failover` runs them:

- `online`: the live replicas (two per partition) to OnlineReplica, which queues a
  LeaderAndIsr entry for each;
- `offline`: the dead broker's replicas to OfflineReplica: a StopReplica entry each, its
  ISR shrink decided, written in one fenced write, recorded, and a LeaderAndIsr entry for
  the live replicas;
- `elections`: the partition state machine's start-up: every partition's state derived,
  and the dead broker's leaderships elected again, written and queued;
- `batching`: of the three, the time inside `RequestBatch.send` (the requests built and
  cut into parts).

The floor of each step is a plain pass over the same partitions that does the step's
irreducible dict and row work, on the same values (docs/performance.md, The controller's
own work, in-process): `online` a state stored and a request entry appended per live
replica; `offline` a state stored, a stop entry appended, the shrunk leadership built
and stored twice (znode and context) and a request entry appended per partition;
`elections` a state stored per partition and, per dead leadership, the new leader chosen
from the assignment, the leadership built and stored twice and a request entry appended.
Each figure is the median of `--runs` fresh runs, each floor the best of as many.

Prints one JSON object (seconds and counts per step). Main thread.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from controller.context import ControllerContext, PartitionReplica
from controller.partition_state_machine import PartitionStateMachine
from controller.replica_state_machine import ReplicaStateMachine
from controller.request_batch import RequestBatch
from controller.states import PartitionState, ReplicaState
from controller.testing.brokers import make_broker
from controller.testing.zookeeper import FakePartitionZk
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventLog
from zkdata.model import ReplicaAssignment

BROKERS = (1, 2, 3)
DEAD = 1
NEW_EPOCH = 1
STEPS = ("online", "offline", "elections", "batching")


@dataclass(frozen=True, slots=True)
class Cluster:
    """Assignments and first states of the benchmarks' synthetic cluster."""

    assignments: dict[str, dict[int, ReplicaAssignment]]
    states: dict[TopicPartition, LeaderIsrAndControllerEpoch]


def cluster(partitions: int, topics: int) -> Cluster:
    """`partitions` in `topics` topics over `BROKERS`, as `bench.control.layout` lays them
    out (RF 3, replicas round robin with a running counter, first replica leading)."""
    base, extra = divmod(partitions, topics)
    width = len(str(topics - 1))
    n = len(BROKERS)
    assignments: dict[str, dict[int, ReplicaAssignment]] = {}
    states: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
    counter = 0
    for t in range(topics):
        topic = f"bench-{t:0{width}d}"
        assignments[topic] = {}
        for p in range(base + (1 if t < extra else 0)):
            replicas = tuple(BROKERS[(counter + k) % n] for k in range(n))
            assignments[topic][p] = ReplicaAssignment(replicas)
            states[TopicPartition(topic, p)] = LeaderIsrAndControllerEpoch(
                LeaderAndIsr(replicas[0], 0, replicas), 0
            )
            counter += 1
    return Cluster(assignments, states)


class _TimedBatch(RequestBatch):
    """A request batch that adds up the time spent in `send`."""

    seconds = 0.0

    def send(self) -> None:
        started = time.perf_counter()
        super().send()
        self.seconds += time.perf_counter() - started


class _TimedReplicas(ReplicaStateMachine):
    """A replica state machine that times each `handle_state_changes` by target."""

    seconds: dict[ReplicaState, float]

    def handle_state_changes(
        self,
        replicas: Sequence[PartitionReplica],
        target: ReplicaState,
        just_written: Mapping[TopicPartition, LeaderAndIsr] | None = None,
    ) -> None:
        started = time.perf_counter()
        super().handle_state_changes(replicas, target, just_written)
        self.seconds[target] = self.seconds.get(target, 0.0) + time.perf_counter() - started


def _count_send(sent: list[int]) -> Callable[..., bool]:
    def send(broker_id: int, request: object, callback: object = None) -> bool:
        sent.append(broker_id)
        return True

    return send


def controller_run(layout: Cluster, events_dir: Path) -> dict[str, float]:
    """One failover's state changes by the real state machines; seconds per step."""
    ctx = ControllerContext()
    ctx.epoch, ctx.epoch_zk_version = NEW_EPOCH, 0
    zk = FakePartitionZk()
    ctx.set_live_brokers(make_broker(b) for b in BROKERS if b != DEAD)
    for topic, assigned in layout.assignments.items():
        ctx.add_topic(topic, dict(assigned))
    for tp, state in layout.states.items():
        ctx.set_leadership(tp, state)
        zk.put_state(tp, state)
    sent: list[int] = []
    events = EventLog(events_dir, f"controller-{time.monotonic_ns()}")
    batch = _TimedBatch(DEAD, ctx, _count_send(sent))
    replicas = _TimedReplicas(ctx, zk, batch, events)
    replicas.seconds = {}
    partitions = PartitionStateMachine(ctx, zk, batch, events)
    gc.collect()
    gc.disable()
    try:
        replicas.startup()
        started = time.perf_counter()
        partitions.startup()
        elections = time.perf_counter() - started
    finally:
        gc.enable()
        events.close()
    if ctx.offline_partition_count():
        raise RuntimeError(f"{ctx.offline_partition_count()} partitions left offline")
    return {
        "online": replicas.seconds[ReplicaState.ONLINE],
        "offline": replicas.seconds[ReplicaState.OFFLINE],
        "elections": elections,
        "batching": batch.seconds,
    }


def floor_run(layout: Cluster) -> dict[str, float]:
    """The same steps as plain passes over the same values (see the module docstring)."""
    assignments = {
        TopicPartition(t, p): a for t, parts in layout.assignments.items() for p, a in parts.items()
    }
    context = dict(layout.states)
    znodes = dict(layout.states)
    replica_states: dict[tuple[TopicPartition, int], ReplicaState] = {}
    partition_states: dict[TopicPartition, PartitionState] = {}
    requests: dict[int, list[object]] = {b: [] for b in BROKERS}
    stops: list[TopicPartition] = []
    live = frozenset(BROKERS) - {DEAD}
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        for tp, a in assignments.items():
            for r in a.replicas:
                if r in live:
                    replica_states[tp, r] = ReplicaState.ONLINE
                    requests[r].append((tp, context[tp], a))
        online = time.perf_counter() - started
        started = time.perf_counter()
        for tp, a in assignments.items():
            replica_states[tp, DEAD] = ReplicaState.OFFLINE
            stops.append(tp)
            lai = context[tp].leader_and_isr
            isr = tuple(r for r in lai.isr if r != DEAD)
            leader = -1 if lai.leader == DEAD else lai.leader
            shrunk = LeaderIsrAndControllerEpoch(
                LeaderAndIsr(leader, lai.leader_epoch + 1, isr, lai.zk_version + 1), NEW_EPOCH
            )
            znodes[tp] = context[tp] = shrunk
            requests[isr[0]].append((tp, shrunk, a))
        offline = time.perf_counter() - started
        started = time.perf_counter()
        for tp, a in assignments.items():
            lai = context[tp].leader_and_isr
            if lai.leader in live:
                partition_states[tp] = PartitionState.ONLINE
                continue
            leader = next(r for r in a.replicas if r in live and r in lai.isr)
            elected = LeaderIsrAndControllerEpoch(
                LeaderAndIsr(leader, lai.leader_epoch + 1, lai.isr, lai.zk_version + 1), NEW_EPOCH
            )
            znodes[tp] = context[tp] = elected
            partition_states[tp] = PartitionState.ONLINE
            requests[leader].append((tp, elected, a))
        elections = time.perf_counter() - started
    finally:
        gc.enable()
    return {"online": online, "offline": offline, "elections": elections, "batching": 0.0}


@dataclass(frozen=True, slots=True)
class Timing:
    """Median seconds of the controller's runs and best seconds of the floor's, per step,
    with what each step moved."""

    partitions: int
    runs: int
    controller: dict[str, float]
    controller_runs: dict[str, list[float]]
    floor: dict[str, float]
    replicas_online: int
    replicas_offline: int
    elections: int


def measure(partitions: int, topics: int, runs: int) -> Timing:
    """`runs` runs of each, alternated, on one cluster."""
    layout = cluster(partitions, topics)
    controller: dict[str, list[float]] = {s: [] for s in STEPS}
    floor: dict[str, list[float]] = {s: [] for s in STEPS}
    with tempfile.TemporaryDirectory(prefix="failover-timing-") as tmp:
        for _ in range(runs):
            for step, seconds in controller_run(layout, Path(tmp)).items():
                controller[step].append(seconds)
            for step, seconds in floor_run(layout).items():
                floor[step].append(seconds)
    n = len(layout.states)
    return Timing(
        n,
        runs,
        {s: statistics.median(v) for s, v in controller.items()},
        controller,
        {s: min(v) for s, v in floor.items()},
        2 * n,
        n,
        sum(1 for s in layout.states.values() if s.leader_and_isr.leader == DEAD),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Parse, measure, print one JSON object; the exit code."""
    parser = argparse.ArgumentParser(prog="python -m controller.failover_timing")
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    if args.topics < 1 or args.partitions < args.topics or args.runs < 1:
        parser.error("need --topics >= 1, --partitions >= --topics and --runs >= 1")
    timing = measure(args.partitions, args.topics, args.runs)
    document: dict[str, Any] = asdict(timing)
    print(json.dumps(document))
    return 0


if __name__ == "__main__":
    sys.exit(main())
