"""Invariant 5: the workload checker's verdict wrapped as an invariant result."""

from __future__ import annotations

from eventlog import LeaderElected, LogTruncated
from rundir.checker.queue import UNCLEAN_ELECTION
from rundir.history import FINAL_READ_PROCESS
from rundir.invariants import acknowledged_kept, acknowledged_writes
from rundir.invariants.testing import EventLogBuilder
from rundir.testing import HistoryBuilder


def _acked(h: HistoryBuilder, *values: str) -> None:
    for offset, value in enumerate(values):
        h.send("producer-0", 0, value, "ok", offset)


def test_acknowledged_writes_read_in_order_hold() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b")
    result = acknowledged_writes(h.ops, h.final_read({0: ["a", "b"]}))
    assert result.ok
    assert result.judged
    assert result.checked > 0


def test_a_lost_write_is_named_with_its_check_and_partition() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b")
    result = acknowledged_writes(h.ops, h.final_read({0: ["a"]}))
    (violation,) = result.violations
    assert violation.subject == "t-0 'b'"
    assert violation.explanation.startswith("lost_writes: acknowledged, absent")
    assert "producer-0" in violation.explanation
    assert violation.ops == ("producer-0#1",)  # the acknowledging send, linked by the report


def test_writes_read_out_of_order_are_named() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b")
    result = acknowledged_writes(h.ops, h.final_read({0: ["b", "a"]}))
    assert any(v.explanation.startswith("reordering:") for v in result.violations)


def test_the_final_read_is_rebuilt_from_the_history_when_not_given() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b")
    h.poll(FINAL_READ_PROCESS, 0, [(0, "a")])
    result = acknowledged_writes(h.ops)
    assert [v.subject for v in result.violations] == ["t-0 'b'"]


def test_a_partition_the_final_read_missed_is_named() -> None:
    h = HistoryBuilder()
    _acked(h, "a")
    result = acknowledged_writes(h.ops, h.final_read({}))
    (violation,) = result.violations
    assert violation.subject == "t-0"
    assert "did not cover" in violation.explanation


def test_not_judged_with_unclean_election_or_without_history() -> None:
    h = HistoryBuilder()
    _acked(h, "a")
    unclean = acknowledged_writes(h.ops, h.final_read({0: []}), loss_allowed=UNCLEAN_ELECTION)
    assert (unclean.judged, unclean.ok) == (False, True)
    assert "unclean" in unclean.note
    power = acknowledged_writes(h.ops, h.final_read({0: []}), loss_allowed="power-loss under x")
    assert (power.judged, power.ok) == (False, True)
    assert "power-loss under x" in power.note
    assert "unclean" not in power.note
    assert not acknowledged_writes(None).judged
    assert not acknowledged_writes(()).judged


def test_unclean_elections_in_the_logs_are_noted() -> None:
    h = HistoryBuilder()
    _acked(h, "a")
    b = EventLogBuilder()
    b.emit(
        "broker1",
        LeaderElected(
            topic="t",
            partition=0,
            unclean=True,
            leader=1,
            leader_epoch=0,
            isr=[],
            zk_version=0,
            zxid=None,
            controller_epoch=1,
            strategy="offline",
        ),
    )
    result = acknowledged_writes(h.ops, h.final_read({0: ["a"]}), logs=b.logs())
    assert "1 unclean elections" in result.note


def _truncated(
    logs: EventLogBuilder, records: list[list[int | str]], node: str = "broker2"
) -> None:
    logs.emit(
        node,
        LogTruncated(
            topic="t", partition=0, to_offset=1, removed=2, leader_epoch=3, removed_records=records
        ),
    )


def test_a_truncation_that_removes_an_acknowledged_record_is_named() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b", "c")
    logs = EventLogBuilder()
    _truncated(logs, [[1, "b"], [2, "c"]])
    result = acknowledged_kept(h.ops, logs.logs())
    (violation,) = result.violations
    assert violation.subject == "t-0"
    assert "removed 2 acknowledged records: 'b'@1, 'c'@2" in violation.explanation
    assert violation.events[0].node == "broker2"
    assert result.checked == 1


def test_removing_unacknowledged_or_other_copies_is_allowed() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b")
    h.send("producer-0", 0, "one", "ok", 2, acks=1)  # acks=1: may be lost
    h.send("producer-0", 0, "retried", "ok", 3, attempts_unknown=1)  # may sit elsewhere too
    h.send("producer-0", 0, "pending", "info")
    logs = EventLogBuilder()
    # "b" at another offset is another copy; the rest were never acknowledged with acks=all
    _truncated(logs, [[2, "one"], [3, "retried"], [4, "pending"], [5, "b"]])
    result = acknowledged_kept(h.ops, logs.logs())
    assert result.ok, result.violations
    assert result.checked == 1


def test_truncations_before_the_run_or_without_records_are_not_judged() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b")
    logs = EventLogBuilder()
    _truncated(logs, [[1, "b"]])
    since = logs.logs()["broker2"][-1].ts + 1
    fields = {"topic": "t", "partition": 0, "to_offset": 1, "removed": 1}
    logs.emit_partial("broker2", "log_truncated", **fields)  # no records: an older writer
    result = acknowledged_kept(h.ops, logs.logs(), since)
    assert result.ok
    assert result.checked == 0
    assert "1 log_truncated without removed_records" in result.note
    assert not acknowledged_kept(None, logs.logs()).judged
    unclean = acknowledged_kept(h.ops, logs.logs(), loss_allowed=UNCLEAN_ELECTION)
    assert not unclean.judged
    assert "unclean" in unclean.note
