"""The checker on hand-written histories: what counts as lost, duplicated, reordered,
unexpected or vanished, and what never does (failed and unknown-outcome writes)."""

from __future__ import annotations

import pytest

from domain import TopicPartition
from rundir.checker import (
    FinalRead,
    check,
    check_stream,
    duplicates,
    failed_writes_read,
    final_read_from_history,
    lost_writes,
    offsets_monotonic,
    reordering,
    unexpected_values,
    vanished_reads,
)
from rundir.testing import HistoryBuilder

TP0 = TopicPartition("t", 0)


def _acked(h: HistoryBuilder, process: str, partition: int, *values: str, base: int = 0) -> None:
    for i, value in enumerate(values):
        h.send(process, partition, value, "ok", base + i)


def test_a_clean_history_passes_every_check() -> None:
    h = HistoryBuilder()
    _acked(h, "p0", 0, "a", "b", "c")
    h.poll("c", 0, [(0, "a"), (1, "b")])
    verdict = check(h.ops, h.final_read({0: ["a", "b", "c"]}))

    assert verdict.ok
    assert verdict.result("lost_writes").checked == 3
    assert verdict.op_counts == {"send invoke": 3, "send ok": 3, "poll invoke": 1, "poll ok": 1}
    assert verdict.report().startswith("verdict: OK")


def test_an_acknowledged_write_missing_from_the_final_read_is_lost() -> None:
    h = HistoryBuilder()
    _acked(h, "p0", 0, "a", "b", "c")
    verdict = check(h.ops, h.final_read({0: ["a", "c"]}))

    lost = verdict.result("lost_writes")
    assert not verdict.ok
    assert len(lost.violations) == 1
    (anomaly,) = lost.violations
    assert (anomaly.value, anomaly.offsets, anomaly.process) == ("b", (1,), "p0")
    assert "lost_writes          1 ANOMALIES" in verdict.report()
    assert "'b'" in verdict.report()


def test_a_lost_write_that_a_poll_had_read_says_so() -> None:
    h = HistoryBuilder()
    _acked(h, "p0", 0, "a", "b")
    h.poll("c", 0, [(0, "a"), (1, "b")])
    result = lost_writes(h.ops, h.final_read({0: ["a"]}))
    assert "a poll had read it at offset 1" in result.violations[0].explanation


def test_a_lost_write_names_its_acknowledging_send_and_the_poll_that_read_it() -> None:
    h = HistoryBuilder()
    _acked(h, "p0", 0, "a", "b", "c")
    h.poll("c", 0, [(1, "b")])
    final = h.final_read({0: ["a"]})
    lost = (lost_writes(h.ops, final), check_stream(iter(h.ops), final).result("lost_writes"))
    for result in lost:
        assert [v.ops for v in result.violations] == [("p0#1", "c#0"), ("p0#2",)]
        assert result.violations[0].to_json()["ops"] == ["p0#1", "c#0"]


def test_a_failed_write_is_never_lost() -> None:
    h = HistoryBuilder()
    _acked(h, "p0", 0, "a")
    h.send("p0", 0, "b", "fail")
    assert check(h.ops, h.final_read({0: ["a"]})).ok


def test_a_failed_write_that_shows_up_is_reported() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "b", "fail")
    verdict = check(h.ops, h.final_read({0: ["b"]}))
    assert [a.value for a in verdict.result("failed_writes_read").violations] == ["b"]
    assert verdict.result("duplicates").ok
    assert verdict.result("unexpected_values").ok


@pytest.mark.parametrize("log", [["a"], ["a", "x"], ["x", "a"]])
def test_an_unknown_outcome_may_or_may_not_appear(log: list[str]) -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 0 if log[0] == "a" else 1)
    h.send("p0", 0, "x", "info")
    assert check(h.ops, h.final_read({0: log})).ok


@pytest.mark.parametrize("log", [[], ["x"], ["x", "x"]])
def test_an_invoke_without_completion_is_an_unknown_outcome(log: list[str]) -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "x", None)
    assert check(h.ops, h.final_read({0: log})).ok


def test_a_value_at_two_offsets_is_a_duplicate() -> None:
    h = HistoryBuilder()
    _acked(h, "p0", 0, "a", "b")
    result = duplicates(h.ops, h.final_read({0: ["a", "b", "a"]}))
    assert [(a.value, a.offsets) for a in result.violations] == [("a", (0, 2))]


def test_an_unknown_attempt_allows_one_more_copy_and_no_more() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 1, attempts_unknown=1)
    assert duplicates(h.ops, h.final_read({0: ["a", "a"]})).ok
    assert len(duplicates(h.ops, h.final_read({0: ["a", "a", "a"]})).violations) == 1


def test_an_info_write_appearing_twice_after_one_unknown_attempt_is_a_duplicate() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "x", "info", attempts_unknown=1)
    assert len(duplicates(h.ops, h.final_read({0: ["x", "x"]})).violations) == 1


def test_acks_read_back_out_of_order_are_reordered() -> None:
    h = HistoryBuilder()
    _acked(h, "p0", 0, "a", "b", "c")
    result = reordering(h.ops, h.final_read({0: ["b", "a", "c"]}))
    assert result.checked == 2
    assert [(a.value, a.offsets) for a in result.violations] == [("b", (1, 0))]
    assert not check(h.ops, h.final_read({0: ["b", "a", "c"]})).ok


def test_order_is_judged_per_producer() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 1)
    h.send("p1", 0, "b", "ok", 0)
    assert check(h.ops, h.final_read({0: ["b", "a"]})).ok


def test_a_duplicate_is_placed_at_its_acked_offset_for_ordering() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 2, attempts_unknown=1)  # an unknown attempt landed at 0
    h.send("p0", 0, "b", "ok", 3)
    assert reordering(h.ops, h.final_read({0: ["a", "z", "a", "b"]})).ok


def test_offsets_must_grow_with_each_ack() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 5)
    h.send("p0", 0, "b", "ok", 3)
    h.send("p0", 1, "c", "ok", 0)
    result = offsets_monotonic(h.ops)
    assert result.checked == 1
    assert [(a.value, a.offsets) for a in result.violations] == [("b", (5, 3))]


def test_offsets_of_acks1_writes_are_not_judged() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 5, acks=1)
    h.send("p0", 0, "b", "ok", 3, acks=1)
    assert offsets_monotonic(h.ops).ok


def test_values_nobody_sent_are_unexpected() -> None:
    h = HistoryBuilder()
    _acked(h, "p0", 0, "a")
    h.poll("c", 0, [(0, "a"), (1, "ghost")])
    result = unexpected_values(h.ops, h.final_read({0: ["a", "ghost"], 1: ["a"]}))
    assert [(a.subject, a.value, a.offsets) for a in result.violations] == [
        ("t-0", "ghost", (1,)),
        ("t-1", "a", (0,)),  # sent to partition 0, read on 1
    ]


def test_an_ack_after_the_final_read_began_is_not_judged() -> None:
    h = HistoryBuilder()
    final = FinalRead(h.now(), {TP0: ()})
    _acked(h, "p0", 0, "late")
    result = lost_writes(h.ops, final)
    assert result.ok
    assert result.checked == 0
    assert "1 acked after the final read began" in result.note


def test_acks1_writes_may_be_lost() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 0, acks=1)
    verdict = check(h.ops, h.final_read({0: []}))
    assert verdict.ok
    assert "1 acks!=all" in verdict.result("lost_writes").note


def test_a_partition_the_final_read_missed_fails_the_verdict() -> None:
    h = HistoryBuilder()
    _acked(h, "p0", 0, "a")
    _acked(h, "p0", 1, "b")
    verdict = check(h.ops, h.final_read({0: ["a"]}))
    assert not verdict.ok
    assert verdict.unread == (TopicPartition("t", 1),)
    assert "final read incomplete: t-1" in verdict.report()


def test_a_record_read_before_the_final_read_must_stay() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "info")
    h.send("p0", 0, "b", "info")
    h.poll("c", 0, [(0, "a"), (1, "b")])
    result = vanished_reads(h.ops, h.final_read({0: ["a", "c"]}))
    assert [(a.value, a.offsets) for a in result.violations] == [("b", (1,))]
    assert "holds 'c'" in result.violations[0].explanation


def test_failed_writes_read_covers_polls_too() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "fail")
    h.poll("c", 0, [(0, "a")])
    assert len(failed_writes_read(h.ops, h.final_read({0: []})).violations) == 1


def test_the_report_shows_five_examples_then_a_count() -> None:
    h = HistoryBuilder()
    _acked(h, "p0", 0, *[f"v{i}" for i in range(8)])
    report = check(h.ops, h.final_read({0: []})).report()
    assert report.count("acknowledged, absent from the final read") == 5
    assert "... and 3 more" in report


def test_the_final_read_can_be_rebuilt_from_its_polls() -> None:
    h = HistoryBuilder()
    _acked(h, "p0", 0, "a", "b", "c")
    h.poll("final", 0, [(0, "a"), (1, "b")], high_watermark=3)
    h.poll("final", 0, [(2, "c"), (3, "late")], from_offset=2, high_watermark=4)
    h.poll("final", 1, [], high_watermark=0)
    h.poll("final", 2, [(0, "x")], high_watermark=5)  # never reached its watermark

    final = final_read_from_history(h.ops, "final")

    assert final.partitions == {
        TP0: ((0, "a"), (1, "b"), (2, "c")),
        TopicPartition("t", 1): (),
    }
    first_invoke = next(op for op in h.ops if op.process == "final")
    assert final.started_ns == first_invoke.time_ns
