"""A run directory whose controllers wrote their rounds as events of columns (schema version
2) is judged exactly as one whose controllers wrote an event per partition (version 1):
the reader expands each round into its partitions' facts, each with the round's line."""

from __future__ import annotations

from pathlib import Path

import pytest

from eventlog import (
    SCHEMA_VERSION,
    ControllerElected,
    Event,
    EventLog,
    IsrChanged,
    IsrsShrunk,
    LeaderElected,
    LeadersElected,
    NodeStarted,
    event_record,
)
from eventlog.log import encode_event, event_log_path
from rundir.invariants import judge
from rundir.reader import RunDirError, load_events, load_run

#: Each controller's rounds: (node, controller epoch, strategy, [(topic, partition, leader,
#: leader epoch, zk version)]). Broker 2 writes leader epoch 1 of t-0 again with another
#: leader: invariant 4's violation.
ROUNDS = [
    ("broker1", 1, "initial", [("t", 0, 1, 0, 0), ("t", 1, 2, 0, 0)]),
    ("broker1", 1, "offline", [("t", 0, 3, 1, 1)]),
    ("broker2", 2, "offline", [("t", 0, 2, 1, 2), ("t", 1, 3, 1, 1)]),
]


def _singles(epoch: int, strategy: str, rows: list[tuple[str, int, int, int, int]]) -> list[Event]:
    return [
        LeaderElected(
            topic=t,
            partition=p,
            leader=leader,
            leader_epoch=le,
            isr=[leader],
            zk_version=zk,
            zxid=None,
            controller_epoch=epoch,
            strategy=strategy,
            unclean=False,
        )
        for t, p, leader, le, zk in rows
    ]


def _round(epoch: int, strategy: str, rows: list[tuple[str, int, int, int, int]]) -> LeadersElected:
    return LeadersElected(
        controller_epoch=epoch,
        strategy=strategy,
        topics=[r[0] for r in rows],
        partitions=[r[1] for r in rows],
        leaders=[r[2] for r in rows],
        leader_epochs=[r[3] for r in rows],
        isrs=[[r[2]] for r in rows],
        zk_versions=[r[4] for r in rows],
        zxids=[None] * len(rows),
        uncleans=[False] * len(rows),
    )


def _shrink(columns: bool) -> list[Event]:
    """Broker 2's controller takes broker 3 out of t-1's ISR."""
    if columns:
        return [
            IsrsShrunk(
                reason="replica offline",
                by="controller",
                replica=3,
                controller_epoch=2,
                topics=["t"],
                partitions=[1],
                leaders=[-1],
                leader_epochs=[2],
                isrs=[[3]],
                zk_versions=[2],
                zxids=[None],
            )
        ]
    return [
        IsrChanged(
            topic="t",
            partition=1,
            reason="replica offline",
            by="controller",
            replica=3,
            leader=-1,
            leader_epoch=2,
            isr=[3],
            zk_version=2,
            zxid=None,
            controller_epoch=2,
        )
    ]


def _run_dir(root: Path, columns: bool) -> Path:
    """The run, its events written as columns (this version) or as version 1 wrote them."""
    logs = {node: EventLog(root, node) for node in ("broker1", "broker2")}
    for node, log in logs.items():
        broker, epoch = int(node[-1]), int(node[-1])
        log.emit(NodeStarted(broker_id=broker, zk_connect="zk"))
        log.emit(
            ControllerElected(
                controller_id=broker, controller_epoch=epoch, epoch_zk_version=0, epoch_zxid=None
            )
        )
    for node, epoch, strategy, rows in ROUNDS:
        events = [_round(epoch, strategy, rows)] if columns else _singles(epoch, strategy, rows)
        for event in events:
            logs[node].emit(event)
    for event in _shrink(columns):
        logs["broker2"].emit(event)
    for log in logs.values():
        log.close()
    if not columns:  # as a version 1 writer wrote them
        for node in logs:
            path = event_log_path(root, node)
            lines = path.read_text().splitlines()
            path.write_text("".join(line.replace('"v":2', '"v":1', 1) + "\n" for line in lines))
    return root


def test_a_run_of_rounds_is_judged_as_the_same_run_of_single_events(tmp_path: Path) -> None:
    rounds = judge(load_run(_run_dir(tmp_path / "rounds", columns=True)))
    singles = judge(load_run(_run_dir(tmp_path / "singles", columns=False)))

    for r, s in zip(rounds.results, singles.results, strict=True):
        assert (r.name, r.checked, r.note, r.judged) == (s.name, s.checked, s.note, s.judged)
        assert [(v.subject, v.explanation) for v in r.violations] == [
            (v.subject, v.explanation) for v in s.violations
        ]
        for rv, sv in zip(r.violations, s.violations, strict=True):
            assert [e.fields for e in rv.events] == [e.fields for e in sv.events]
    two_leaders, _ = rounds.result("one_leader_per_leader_epoch").violations
    assert two_leaders.explanation == "leader epoch 1 was written with leaders 2, 3"
    # each fact points at its round's line: broker1's second round, broker2's round
    assert [(e.node, e.line) for e in two_leaders.events] == [("broker2", 3), ("broker1", 4)]


def test_the_reader_gives_each_fact_its_rounds_line(tmp_path: Path) -> None:
    logs = load_events(_run_dir(tmp_path, columns=True))
    facts = [(e.line, e.kind, e.fields["partition"]) for e in logs["broker2"][2:]]
    assert facts == [(3, "leader_elected", 0), (3, "leader_elected", 1), (4, "isr_changed", 1)]
    # one line, one time, one kind: the facts still hash apart (a set of a round's 100,000
    # facts must not compare each with every other)
    first, second = logs["broker2"][2:4]
    assert hash(first) != hash(second)
    assert len({first, second}) == 2


def test_a_round_whose_columns_do_not_match_is_refused_with_file_and_line(
    tmp_path: Path,
) -> None:
    run = _run_dir(tmp_path, columns=True)
    broken = event_record(_round(2, "offline", [("t", 0, 2, 3, 4)]), 9, "broker2")
    broken["zxids"] = [1, 2]
    assert broken["v"] == SCHEMA_VERSION
    with open(event_log_path(run, "broker2"), "a") as f:
        f.write(encode_event(broken) + "\n")
    with pytest.raises(RunDirError, match=r"broker2\.jsonl: line 5: leaders_elected: columns"):
        load_events(run)
