"""`controller.failover_timing`: the controller's own failover steps in-process, and the
floor's plain passes over the same partitions. Small clusters; no figure is checked
against a time, only what each step did and that every figure is a duration."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from controller import failover_timing as timing
from domain import TopicPartition
from eventlog import read_events


def test_the_cluster_is_laid_out_as_the_benchmarks_lay_it_out() -> None:
    layout = timing.cluster(7, 2)
    assert [len(p) for p in layout.assignments.values()] == [4, 3]
    replicas = [a.replicas for p in layout.assignments.values() for a in p.values()]
    assert replicas[:4] == [(1, 2, 3), (2, 3, 1), (3, 1, 2), (1, 2, 3)]
    first = layout.states[TopicPartition("bench-0", 1)].leader_and_isr
    assert (first.leader, first.isr, first.leader_epoch) == (2, (2, 3, 1), 0)


def test_a_controller_run_times_every_step_and_leaves_nothing_offline(tmp_path: Path) -> None:
    seconds = timing.controller_run(timing.cluster(300, 3), tmp_path)
    assert set(seconds) == set(timing.STEPS)
    assert all(s > 0 for s in seconds.values())
    assert seconds["batching"] < sum(seconds[s] for s in ("online", "offline", "elections"))
    (log,) = tmp_path.glob("**/*.jsonl")
    kinds = [json.loads(line)["kind"] for line in log.read_text().splitlines()]
    # one event per round: the ISR shrinks of broker 1's 300 replicas and the elections of
    # its 100 leaderships, each partition a fact of its round
    assert kinds.count("isrs_shrunk") == kinds.count("leaders_elected") == 1
    assert "replica_state_change" in kinds
    facts = Counter(e["kind"] for e in read_events(log))
    assert (facts["isr_changed"], facts["leader_elected"]) == (300, 100)


def test_the_floor_moves_the_same_partitions() -> None:
    seconds = timing.floor_run(timing.cluster(300, 3))
    assert seconds["batching"] == 0.0
    assert all(seconds[s] > 0 for s in ("online", "offline", "elections"))


def test_measure_counts_what_the_steps_moved() -> None:
    result = timing.measure(300, 3, runs=2)
    assert (result.replicas_online, result.replicas_offline, result.elections) == (600, 300, 100)
    assert all(len(v) == 2 for v in result.controller_runs.values())


def test_main_prints_one_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert timing.main(["--partitions", "30", "--topics", "3", "--runs", "1"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["partitions"] == 30
    assert set(printed["floor"]) == set(timing.STEPS)


def test_main_refuses_fewer_partitions_than_topics() -> None:
    with pytest.raises(SystemExit):
        timing.main(["--partitions", "2", "--topics", "3"])
