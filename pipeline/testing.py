"""Test doubles: `write_run` writes a small synthetic run directory that follows
docs/runs.md (version 1): one broker killed and restarted, a controller failover whose
UpdateMetadata the live brokers apply (one during the failover, one after it), a leader
election, a producer's history with failures during the outage, a final read, converged
snapshots, and the runner's `verdict.json` (computed by the chaos engine's `load_run` and
`judge` with the runner's arguments). `BREAKS` names the ways a run can be made to violate
an invariant. For tests only; one thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from domain import TopicPartition
from eventlog import (
    BrokerChange,
    ControllerElected,
    ControllerFailoverDone,
    ControlRequestSent,
    LeaderElected,
    NodeStarted,
    RequestAccepted,
    read_events,
)
from pipeline.metadata import INPUT_COLUMNS
from pipeline.run_writer import event, fault_phases, write_config, write_jsonl, write_runner_verdict
from rundir.history import HistoryOp, OpType
from rundir.invariants import names
from rundir.invariants.convergence import BrokerView, ClusterSnapshot, PartitionState
from rundir.invariants.convergence import ViewedPartition as Viewed
from rundir.layout import RunDir
from rundir.results import RunVerdict

__all__ = [
    "BREAKS",
    "ELECTED",
    "FAULT_START",
    "METADATA_CURRENT",
    "T0",
    "TOPIC",
    "metadata_rows",
    "write_run",
]

T0 = 1_700_000_000_000
TOPIC = "t-0a1b2c"
#: Each break and the invariant it violates.
BREAKS: Mapping[str, str] = {
    "lost_write": names.ACKNOWLEDGED_WRITES,
    "two_controllers": names.ONE_CONTROLLER_PER_EPOCH,
    "stale_controller_epoch": names.CONTROLLER_EPOCH_FENCING,
    "leader_epoch_regression": names.ONE_LEADER_PER_LEADER_EPOCH,
}
FAULT_START, FAULT_STOP, ELECTED = T0 + 5_000, T0 + 15_000, T0 + 11_000
#: When the last live broker (broker3) applied the new controller's UpdateMetadata.
METADATA_CURRENT = ELECTED + 180
UPDATE_METADATA = "UpdateMetadata"


def _leader(
    ts: int, node: str, partition: int, leader: int, epoch: int, cepoch: int, strategy: str
) -> dict[str, Any]:
    return event(
        ts,
        node,
        LeaderElected(
            topic=TOPIC,
            partition=partition,
            leader=leader,
            leader_epoch=epoch,
            isr=[leader],
            zk_version=epoch,
            controller_epoch=cepoch,
            strategy=strategy,
            unclean=False,
            zxid=None,
        ),
    )


def _won(
    ts: int, node: str, epoch: int, duration_ms: float, during: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A controller's election, the events `during` its failover, and the failover's end
    `duration_ms` after the election."""
    return [
        event(
            ts,
            node,
            ControllerElected(
                controller_id=int(node[-1]),
                controller_epoch=epoch,
                epoch_zk_version=epoch,
                epoch_zxid=None,
            ),
        ),
        *during,
        event(
            ts + int(duration_ms),
            node,
            ControllerFailoverDone(
                controller_epoch=epoch,
                brokers=3,
                topics=1,
                partitions=2,
                offline_partitions=0,
                duration_ms=duration_ms,
            ),
        ),
    ]


def _update_metadata_sent(
    ts: int, node: str, epoch: int, brokers: list[int]
) -> list[dict[str, Any]]:
    """The failover's UpdateMetadata to each live broker, queued by controller `node`."""
    return [
        event(
            ts,
            node,
            ControlRequestSent(
                api="UpdateMetadata",
                broker_id=b,
                controller_epoch=epoch,
                broker_epoch=10,
                partitions=2,
            ),
        )
        for b in brokers
    ]


def _accepted(
    ts: int, node: str, controller: int, epoch: int, api: str = "LeaderAndIsr"
) -> dict[str, Any]:
    return event(
        ts,
        node,
        RequestAccepted(
            api=api,
            controller_id=controller,
            controller_epoch=epoch,
            request_broker_epoch=10,
            broker_epoch=10,
            partitions=2,
            partition_errors=0,
        ),
    )


def _events(breaks: frozenset[str], offset: int) -> dict[str, list[dict[str, Any]]]:
    b1 = [
        event(T0, "broker1", NodeStarted(broker_id=1, zk_connect="zk")),
        *_won(
            T0 + 100,
            "broker1",
            1,
            50.0,
            [
                *_update_metadata_sent(T0 + 120, "broker1", 1, [1, 2, 3]),
                _accepted(T0 + 125, "broker1", 1, 1, UPDATE_METADATA),
            ],
        ),
        _leader(T0 + 1_100, "broker1", 0, 1, 0, 1, "initial"),
        _leader(T0 + 1_100, "broker1", 1, 2, 0, 1, "initial"),
        event(FAULT_STOP + 100, "broker1", NodeStarted(broker_id=1, zk_connect="zk")),
        _accepted(FAULT_STOP + 400, "broker1", 2, 2),
    ]
    b2 = [
        event(T0 + 10, "broker2", NodeStarted(broker_id=2, zk_connect="zk")),
        _accepted(T0 + 130, "broker2", 1, 1, UPDATE_METADATA),
        _accepted(T0 + 1_110, "broker2", 1, 1),
        *_won(
            ELECTED,
            "broker2",
            2,
            150.0,
            [
                *_update_metadata_sent(ELECTED + 20, "broker2", 2, [2, 3]),
                _accepted(ELECTED + 30, "broker2", 2, 2, UPDATE_METADATA),
            ],
        ),
        event(
            ELECTED + 200,
            "broker2",
            BrokerChange(new=[], dead=[1], bounced=[], live=[2, 3], epochs={"2": 10, "3": 10}),
        ),
        _leader(ELECTED + 250, "broker2", 0, 2, 1, 2, "offline"),
        event(
            FAULT_STOP + 300,
            "broker2",
            BrokerChange(
                new=[1], dead=[], bounced=[], live=[1, 2, 3], epochs={"1": 11, "2": 10, "3": 10}
            ),
        ),
    ]
    b3 = [
        event(T0 + 10, "broker3", NodeStarted(broker_id=3, zk_connect="zk")),
        _accepted(T0 + 140, "broker3", 1, 1, UPDATE_METADATA),
        _accepted(T0 + 1_110, "broker3", 1, 1),
        _accepted(METADATA_CURRENT, "broker3", 2, 2, UPDATE_METADATA),
        _accepted(ELECTED + 260, "broker3", 2, 2),
    ]
    if "two_controllers" in breaks:
        b3.append(
            event(
                ELECTED + 270,
                "broker3",
                ControllerElected(
                    controller_id=3, controller_epoch=2, epoch_zk_version=2, epoch_zxid=None
                ),
            )
        )
    if "stale_controller_epoch" in breaks:
        b3.append(_accepted(ELECTED + 280, "broker3", 1, 1))
    if "leader_epoch_regression" in breaks:
        b2.append(_leader(ELECTED + 290, "broker2", 0, 3, 0, 2, "offline"))
    return {"broker1": b1, "broker2": b2, "broker3": b3}


def _send(kind: OpType, at: int, i: int, offset: int | None, error: str | None) -> HistoryOp:
    """Producer 0's send `i` (partition i mod 2) at wall time `at`."""
    return HistoryOp(
        kind,
        "send",
        "producer-0",
        at * 1_000_000,
        at,
        TOPIC,
        i % 2,
        offset,
        f"producer-0-{i}",
        error,
        i,
        acks=-1,
        attempts=0 if kind == "invoke" else 1,
    )


def _poll(
    kind: OpType, at: int, partition: int, offset: int, records: tuple[tuple[int, str], ...] | None
) -> HistoryOp:
    """The final read's poll of `partition` at wall time `at`."""
    return HistoryOp(
        kind,
        "poll",
        "final-read",
        at * 1_000_000,
        at,
        TOPIC,
        partition,
        offset,
        None,
        None,
        partition,
        attempts=0 if records is None else 1,
        records=records,
    )


def _history(breaks: frozenset[str], offset: int) -> dict[str, list[HistoryOp]]:
    sends: list[HistoryOp] = []
    acked: dict[int, list[tuple[int, str]]] = {0: [], 1: []}
    for i in range(180):
        partition, wall = i % 2, T0 + 2_000 + offset + 100 * i
        down = partition == 0 and FAULT_START <= wall < ELECTED + 250
        sends.append(_send("invoke", wall, i, None, None))
        done = wall + 5 + (i % 7) * 3
        if down:
            sends.append(_send("fail", done, i, None, "NOT_LEADER_OR_FOLLOWER"))
            continue
        given = len(acked[partition])
        acked[partition].append((given, f"producer-0-{i}"))
        sends.append(_send("ok", done, i, given, None))
    reads: list[HistoryOp] = []
    read_at = T0 + 25_000
    for partition, records in acked.items():
        kept = records[:3] + records[4:] if "lost_write" in breaks and partition == 1 else records
        reads.append(_poll("invoke", read_at, partition, 0, None))
        reads.append(_poll("ok", read_at + 5, partition, len(records), tuple(kept)))
        read_at += 10
    return {"producer-0": sends, "final-read": reads}


def _snapshot(after_heal_ms: int) -> ClusterSnapshot:
    parts = {TopicPartition(TOPIC, p): PartitionState(2, (2, 3, 1), (1, 2, 3)) for p in (0, 1)}
    view = BrokerView(2, {tp: Viewed(s.leader, s.isr) for tp, s in parts.items()})
    return ClusterSnapshot(
        after_heal_ms,
        2,
        2,
        frozenset({1, 2, 3}),
        parts,
        {b: view for b in (1, 2, 3)},
        frozenset({2}),
    )


def write_run(
    root: Path,
    run_id: str,
    *,
    scenario: str = "broker-failure",
    breaks: frozenset[str] = frozenset(),
    offset: int = 0,
) -> RunVerdict:
    """Write the run `root/run_id` (`breaks` from `BREAKS`; `offset` ms shifts the producer
    so that runs differ) and its runner verdict, which is returned."""
    unknown = breaks - BREAKS.keys()
    if unknown:
        raise ValueError(f"no such break: {sorted(unknown)}")
    run = RunDir(root / run_id).create()
    write_config(run, scenario=scenario, topic=TOPIC, started_ms=T0 + 1_000, partitions=2)
    write_jsonl(
        run.faults, fault_phases("step-0", "kill", "broker1", FAULT_START, 6, FAULT_STOP, 10)
    )
    for node, records in _events(breaks, offset).items():
        write_jsonl(run.events / f"{node}.jsonl", records)
    for process, ops in _history(breaks, offset).items():
        (run.history / f"{process}.jsonl").write_text(
            "".join(op.to_json() + "\n" for op in ops), encoding="utf-8"
        )
    write_jsonl(run.snapshots, [_snapshot(ms).to_json() for ms in (400 + offset % 500, 1_400)])
    write_jsonl(run.metrics, [{"ts": T0 + 2_000, "node": "broker1", "ok": True, "metrics": {}}])
    return write_runner_verdict(
        run, scenario=scenario, topic=TOPIC, started_ms=T0 + 1_000, faults=1
    )


def metadata_rows(run: Path) -> pd.DataFrame:
    """The run's events as the Spark job hands them to `pipeline.metadata`:
    `INPUT_COLUMNS`, None for the fields an event has not."""
    return pd.DataFrame(
        [
            {c: r.get(c) for c in INPUT_COLUMNS} | {"run_id": run.name}
            for path in sorted((run / "events").glob("*.jsonl"))
            for r in read_events(path)
        ],
        columns=list(INPUT_COLUMNS),
    )
