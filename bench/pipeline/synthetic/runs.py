"""Many synthetic chaos runs with the mix of records a real cluster and workload write, for
the pipeline benchmark (`bench.pipeline`). Seeded; the calling thread.

`write_runs(root, records)` writes run directories (docs/runs.md, version 1) until they
hold `records` records: event-log lines, history lines, fault phases and snapshots. Each
run is a 3-broker cluster with one topic of 6 to 12 partitions (replication factor 3),
simulated as the nodes log it (docs/events.md): the brokers start and register, the first
controller fails over (UpdateMetadata to every live broker), the topic is created
(initial elections, LeaderAndIsr and UpdateMetadata, with the brokers' `request_accepted`
and the controller's `control_response_received`), followers drop out of and rejoin ISRs
under load, and the run's faults (one to four, by scenario: kill, stop, pause, bounce of
the controller or of another broker, a ZooKeeper leader kill) take effect: the session
expires, a new controller fails over, the dead broker's leaderships move, it comes back
and catches up. Two producers send to every partition all along; sends to a partition
without a live leader fail. A final read returns what was acknowledged, snapshots after
the final heal converge, and `verdict.json` is the chaos engine's own judgement. Every
fiftieth run loses an acknowledged write, as a buggy cluster would.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.pipeline.synthetic.cluster import BROKERS, SimCluster
from bench.pipeline.synthetic.faults import fault
from domain import TopicPartition
from eventlog import NodeStarted
from pipeline.run_writer import (
    fault_phases,
    write_config,
    write_jsonl,
    write_runner_verdict,
)
from rundir.history import HistoryOp
from rundir.invariants.convergence import BrokerView, ClusterSnapshot, PartitionState
from rundir.invariants.convergence import ViewedPartition as Viewed
from rundir.layout import RunDir

__all__ = ["SCENARIOS", "Generated", "write_runs"]

T0 = 1_750_000_000_000
#: scenario -> the faults of one run: (kind, target role) each.
SCENARIOS: dict[str, tuple[tuple[str, str], ...]] = {
    "broker-failure": (("kill", "follower"),),
    "controller-failover": (("kill", "controller"),),
    "controller-pause": (("pause", "controller"),),
    "broker-bounce": (("bounce", "follower"), ("bounce", "follower")),
    "zk-leader-loss": (("zk-leader-kill", "zookeeper"),),
    "random-faults": (
        ("stop", "follower"),
        ("kill", "controller"),
        ("pause", "follower"),
        ("zk-leader-kill", "zookeeper"),
    ),
}
LOST_WRITE_EVERY = 50


@dataclass
class Generated:
    """What `write_runs` wrote: runs and records, by file family."""

    root: Path
    runs: int = 0
    records: dict[str, int] = field(
        default_factory=lambda: {"events": 0, "history": 0, "faults": 0, "snapshots": 0}
    )

    @property
    def total(self) -> int:
        """Every record written."""
        return sum(self.records.values())


RATE_PER_S = 5
PRODUCERS = 2


def _history(
    rng: random.Random, cluster: SimCluster, start: int, end: int, lose: bool
) -> dict[str, list[HistoryOp]]:
    """Two producers' sends to every partition in turn, at `RATE_PER_S` each, failing while
    a partition has no live leader; then the final read of what was acknowledged."""
    topic, n = cluster.topic, len(cluster.parts)
    ticks = sorted(
        (start + k * 37 + i * (1000 // RATE_PER_S), k, i)
        for k in range(PRODUCERS)
        for i in range((end - start) * RATE_PER_S // 1000)
    )
    out: dict[str, list[HistoryOp]] = {f"producer-{k}": [] for k in range(PRODUCERS)}
    acked: dict[int, list[tuple[int, str]]] = {p: [] for p in range(n)}
    for at, k, i in ticks:
        process, p = f"producer-{k}", (i * PRODUCERS + k) % n
        value = f"{process}-{i}"
        ops = out[process]
        ops.append(
            HistoryOp(
                "invoke",
                "send",
                process,
                at * 1_000_000,
                at,
                topic,
                p,
                None,
                value,
                None,
                i,
                acks=-1,
            )
        )
        done = at + rng.randint(2, 15)
        if any(a <= at < b for a, b in cluster.down[p]):
            ops.append(
                HistoryOp(
                    "fail",
                    "send",
                    process,
                    done * 1_000_000,
                    done,
                    topic,
                    p,
                    None,
                    value,
                    "NOT_LEADER_OR_FOLLOWER",
                    i,
                    acks=-1,
                    attempts=3,
                )
            )
            continue
        offset = len(acked[p])
        acked[p].append((offset, value))
        ops.append(
            HistoryOp(
                "ok",
                "send",
                process,
                done * 1_000_000,
                done,
                topic,
                p,
                offset,
                value,
                None,
                i,
                acks=-1,
                attempts=1,
            )
        )
    reads: list[HistoryOp] = []
    read_at = end + 2_000
    for p, records in acked.items():
        kept = records[:1] + records[2:] if lose and p == 0 and len(records) > 2 else records
        reads.append(
            HistoryOp(
                "invoke",
                "poll",
                "final-read",
                read_at * 1_000_000,
                read_at,
                topic,
                p,
                0,
                None,
                None,
                p,
            )
        )
        read_at += rng.randint(3, 9)
        reads.append(
            HistoryOp(
                "ok",
                "poll",
                "final-read",
                read_at * 1_000_000,
                read_at,
                topic,
                p,
                len(records),
                None,
                None,
                p,
                attempts=1,
                records=tuple(kept),
            )
        )
    out["final-read"] = reads
    return out


def _snapshots(cluster: SimCluster, settled: bool) -> list[dict[str, Any]]:
    """Snapshots every second after the final heal; the first one not yet converged when
    a broker was still catching up."""
    out = []
    for i in range(5):
        parts = {
            TopicPartition(cluster.topic, p): PartitionState(
                part.leader,
                tuple(part.isr[:-1]) if i == 0 and not settled else tuple(part.isr),
                part.replicas,
            )
            for p, part in cluster.parts.items()
        }
        view = BrokerView(
            cluster.controller, {tp: Viewed(st.leader, st.isr) for tp, st in parts.items()}
        )
        snapshot = ClusterSnapshot(
            i * 1_000,
            cluster.controller,
            cluster.epoch,
            frozenset(cluster.live),
            parts,
            dict.fromkeys(sorted(cluster.live), view),
            frozenset({cluster.controller}),
        )
        out.append(snapshot.to_json())
    return out


def _write_run(root: Path, index: int, rng: random.Random, judged: bool) -> Generated:
    """One run; what it holds."""
    scenario = sorted(SCENARIOS)[index % len(SCENARIOS)]
    base = T0 + index * 600_000
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(base / 1000))
    run = RunDir(root / f"{stamp}-{scenario}-s{index}").create()
    topic = f"{scenario}-{rng.getrandbits(24):06x}"
    cluster = SimCluster(rng, topic, rng.randint(6, 12))
    for b in BROKERS:
        cluster.emit(
            base + b * 10,
            b,
            NodeStarted(broker_id=b, zk_connect="zk1:2181,zk2:2181,zk3:2181/testbed"),
        )
        cluster.register(base + 300 + b * 10, b)
    cluster.failover(base + 500, 1)
    started = base + 2_000
    now = cluster.create_topic(started + 100)
    faults: list[dict[str, Any]] = []
    end = started + rng.randint(75_000, 120_000)
    plan = list(SCENARIOS[scenario])
    next_fault = now + rng.randint(5_000, 15_000)
    while now < end or plan:
        if plan and now >= next_fault:
            kind, role = plan.pop(0)
            stop = now + rng.randint(8_000, 15_000)
            target, stop, undone, settled = fault(cluster, now, kind, role, stop)
            faults += fault_phases(
                f"step-{len(faults) // 4}",
                kind,
                target,
                now,
                rng.randint(2, 40),
                stop,
                undone - stop,
            )
            now = max(settled, undone) + rng.randint(500, 2_000)
            next_fault = now + rng.randint(3_000, 10_000)
        else:
            now = cluster.churn(now) + rng.randint(300, 2_000)
    for b, lines in cluster.logs.items():
        write_jsonl(
            run.events / f"broker{b}.jsonl",
            [r for _, _, r in sorted(lines, key=lambda x: (x[0], x[1]))],
        )
    history = _history(
        rng, cluster, started + 500, end, lose=index % LOST_WRITE_EVERY == LOST_WRITE_EVERY - 1
    )
    for process, ops in history.items():
        (run.history / f"{process}.jsonl").write_text(
            "".join(op.to_json() + "\n" for op in ops), encoding="utf-8"
        )
    write_jsonl(run.faults, faults)
    snapshots = _snapshots(cluster, settled=not faults)
    write_jsonl(run.snapshots, snapshots)
    write_config(
        run,
        scenario=scenario,
        topic=topic,
        started_ms=started,
        partitions=len(cluster.parts),
        seed=index,
    )
    if judged:
        write_runner_verdict(
            run,
            scenario=scenario,
            topic=topic,
            started_ms=started,
            faults=len(faults) // 4,
            seed=index,
        )
    made = Generated(root, runs=1)
    made.records.update(
        events=sum(len(v) for v in cluster.logs.values()),
        history=sum(len(v) for v in history.values()),
        faults=len(faults),
        snapshots=len(snapshots),
    )
    return made


def write_runs(
    root: Path,
    records: int,
    *,
    seed: int = 0,
    judged: bool = True,
    progress: Callable[[Generated], None] = lambda _: None,
) -> Generated:
    """Runs under `root` until they hold at least `records` records (`progress` is called
    after each run); what was written. `judged`: write each run's `verdict.json`."""
    rng = random.Random(seed)
    made = Generated(root)
    while made.total < records:
        one = _write_run(root, made.runs, rng, judged)
        made.runs += 1
        for family, n in one.records.items():
            made.records[family] += n
        progress(made)
    return made
