"""Jepsen's queue classes judged on every run: `judge` lists each class, shows what the
configuration allows apart from what fails, and measures the history."""

from __future__ import annotations

from domain import TopicPartition
from rundir.checker import QUEUE_CLASSES, FinalRead
from rundir.invariants import RunInputs, judge, queue_anomalies
from rundir.invariants.testing import EventLogBuilder
from rundir.testing import HistoryBuilder


def _final(h: HistoryBuilder) -> FinalRead:
    """A final read holding only `b`, at offset 1."""
    return FinalRead(h.now(), {TopicPartition("t", 0): ((1, "b"),)})


def _lost_below_a_read() -> HistoryBuilder:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 0)
    h.send("p0", 0, "b", "ok", 1)
    h.poll("c", 0, [(1, "b")], from_offset=1)
    return h


def test_judge_fails_a_run_on_a_lost_write_with_its_witness() -> None:
    h = _lost_below_a_read()
    verdict = judge(RunInputs(EventLogBuilder().logs(), h.ops, _final(h)))
    assert not verdict.ok
    (v,) = verdict.result("lost-write").violations
    assert (v.value, v.offsets, v.ops) == ("a", (0, 1), ("p0#0", "c#0"))
    assert "lost-write" in [r["name"] for r in verdict.to_json()["invariants"] if not r["ok"]]
    assert "worst_lag_ms" in verdict.to_json()["stats"]


def test_with_unclean_election_a_lost_write_is_allowed_and_shown_apart() -> None:
    h = _lost_below_a_read()
    inputs = RunInputs(EventLogBuilder().logs(), h.ops, _final(h), unclean_leader_election=True)
    verdict = judge(inputs)
    assert verdict.ok  # allowed anomalies never fail the run
    assert verdict.result("lost-write").ok
    assert [r.name for r in verdict.allowed()] == ["lost-write", "unseen"]
    assert verdict.to_json()["allowed"] == ["lost-write", "unseen"]
    table = verdict.table()
    rows = table.splitlines()
    heading = next(i for i, row in enumerate(rows) if row.startswith("allowed (found"))
    lost = [i for i, row in enumerate(rows) if row.split()[:2] == ["lost-write", "allowed"]]
    assert lost
    assert lost[0] > heading
    assert "unseen" in verdict.report().split("allowed (found")[1]
    assert "\nworst_lag: t-0 'b'" in table
    assert "unseen_over_time" not in table


def test_without_a_history_every_class_is_named_not_judged() -> None:
    results = queue_anomalies(None).results
    assert [r.name for r in results] == list(QUEUE_CLASSES)
    assert not any(r.judged for r in results)


def test_the_final_read_is_rebuilt_from_the_history_when_not_given() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 0)
    h.send("p0", 0, "b", "ok", 1)
    h.poll("final-read", 0, [(0, "a")], high_watermark=1)
    (v,) = next(r for r in queue_anomalies(h.ops).results if r.name == "unseen").violations
    assert v.value == "b"
