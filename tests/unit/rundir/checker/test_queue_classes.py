"""Jepsen's queue classes on hand-written histories: for each class a history that breaks
it (with its witness: operations, process, offsets, value), one the configuration allows
where that applies, and a clean one."""

from __future__ import annotations

from rundir.checker import QUEUE_CLASSES, FinalRead, QueuePolicy, QueueVerdict, queue_classes
from rundir.results import Violation
from rundir.testing import HistoryBuilder

NO_FINAL = FinalRead(1 << 60, {})


def classes(
    h: HistoryBuilder, final: FinalRead = NO_FINAL, *, unclean: bool = False
) -> QueueVerdict:
    return queue_classes(iter(h.ops), final, QueuePolicy(unclean_leader_election=unclean))


def failing(verdict: QueueVerdict, name: str) -> tuple[Violation, ...]:
    return next(r for r in verdict.results if r.name == name and not r.allowed).violations


def allowed(verdict: QueueVerdict, name: str) -> tuple[Violation, ...]:
    return next((r.violations for r in verdict.results if r.name == name and r.allowed), ())


def anomalies(verdict: QueueVerdict) -> dict[str, int]:
    return {r.name: len(r.violations) for r in verdict.results if r.violations}


def _acked(h: HistoryBuilder, *values: str, process: str = "p0", partition: int = 0) -> None:
    for offset, value in enumerate(values):
        h.send(process, partition, value, "ok", offset)


def test_every_class_has_a_failing_result_in_jepsens_order() -> None:
    h = HistoryBuilder()
    _acked(h, "a")
    h.poll("c", 0, [(0, "a")])
    verdict = classes(h, h.final_read({0: ["a"]}))
    assert [r.name for r in verdict.results] == list(QUEUE_CLASSES)
    assert all(r.ok and r.judged and not r.allowed for r in verdict.results)


def test_inconsistent_offsets_names_both_operations() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 0)
    h.poll("c", 0, [(0, "b")])
    (v,) = failing(classes(h), "inconsistent-offsets")
    assert (v.subject, v.value, v.offsets, v.ops) == ("t-0", "b", (0,), ("p0#0", "c#0"))
    assert "'a'" in v.explanation


def test_a_read_at_the_acknowledged_offset_is_consistent() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 0)
    h.poll("c", 0, [(0, "a")])
    assert anomalies(classes(h)) == {}


def test_duplicate_beyond_the_allowance_fails() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 1)
    h.poll("c", 0, [(0, "a"), (1, "a")])
    (v,) = failing(classes(h), "duplicate")
    assert (v.value, v.offsets, v.ops) == ("a", (0, 1), ("p0#0", "c#0"))


def test_duplicate_of_a_retried_send_is_allowed() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 1, attempts_unknown=1)
    h.poll("c", 0, [(0, "a"), (1, "a")])
    verdict = classes(h)
    assert failing(verdict, "duplicate") == ()
    (v,) = allowed(verdict, "duplicate")
    assert v.offsets == (0, 1)


def test_lost_write_below_a_higher_read() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b")
    h.poll("c", 0, [(1, "b")], from_offset=1)
    (v,) = failing(classes(h), "lost-write")
    assert (v.value, v.offsets, v.ops) == ("a", (0, 1), ("p0#0", "c#0"))


def test_lost_write_is_allowed_with_acks_1_or_unclean_election() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 0, acks=1)
    h.send("p0", 0, "b", "ok", 1)
    h.poll("c", 0, [(1, "b")], from_offset=1)
    verdict = classes(h)
    assert failing(verdict, "lost-write") == ()
    assert [v.value for v in allowed(verdict, "lost-write")] == ["a"]
    h2 = HistoryBuilder()
    _acked(h2, "a", "b")
    h2.poll("c", 0, [(1, "b")], from_offset=1)
    assert len(allowed(classes(h2, unclean=True), "lost-write")) == 1


def test_a_power_loss_allows_what_unclean_election_does_and_names_itself() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b")
    h.poll("c", 0, [(1, "b")], from_offset=1)
    policy = QueuePolicy(acknowledged_loss_allowed="power-loss under x")
    verdict = queue_classes(iter(h.ops), h.final_read({0: ["b"]}), policy)
    assert failing(verdict, "lost-write") == failing(verdict, "unseen") == ()
    assert [v.value for v in allowed(verdict, "lost-write")] == ["a"]
    assert [v.value for v in allowed(verdict, "unseen")] == ["a"]
    assert policy.loss_allowed == "power-loss under x"
    assert QueuePolicy(unclean_leader_election=True).loss_allowed == "unclean election"
    assert QueuePolicy().loss_allowed is None


def test_a_write_read_later_is_not_lost() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b")
    h.poll("c", 0, [(1, "b")], from_offset=1)
    h.poll("d", 0, [(0, "a")])
    assert failing(classes(h), "lost-write") == ()


def test_unseen_at_the_final_read() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b")
    verdict = classes(h, h.final_read({0: ["a"]}))
    (v,) = failing(verdict, "unseen")
    assert (v.value, v.offsets, v.ops) == ("b", (1,), ("p0#1",))
    assert verdict.stats["unseen_end"] == 2  # no poll of the history read either
    assert verdict.stats["unseen_max"] == 2


def test_unseen_is_allowed_with_unclean_election_and_clean_when_read() -> None:
    h = HistoryBuilder()
    _acked(h, "a")
    final = h.final_read({0: []})
    assert len(allowed(classes(h, final, unclean=True), "unseen")) == 1
    assert failing(classes(h, final, unclean=True), "unseen") == ()
    assert failing(classes(h, h.final_read({0: ["a"]})), "unseen") == ()


def test_unseen_leaves_out_partitions_the_final_read_missed() -> None:
    h = HistoryBuilder()
    _acked(h, "a")
    verdict = classes(h, h.final_read({}))
    result = next(r for r in verdict.results if r.name == "unseen")
    assert result.ok
    assert "1 acknowledged after the final read began" in result.note


def test_g1a_a_definitely_failed_send_read() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "fail")
    h.poll("c", 0, [(0, "a")])
    (v,) = failing(classes(h), "G1a")
    assert (v.value, v.offsets, v.ops) == ("a", (0,), ("p0#0", "c#0"))


def test_an_unknown_send_read_is_not_g1a() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "info")
    h.send("p0", 0, "b", "fail", attempts_unknown=1)
    h.poll("c", 0, [(0, "a"), (1, "b")])
    assert anomalies(classes(h)) == {}


def test_poll_skip_between_polls() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b", "c")
    h.poll("c", 0, [(0, "a")])
    h.poll("c", 0, [(2, "c")], from_offset=1)
    (v,) = failing(classes(h), "poll-skip")
    assert (v.value, v.offsets, v.process, v.ops) == ("b", (1,), "c", ("c#0", "c#1"))


def test_poll_skip_after_the_consumers_own_seek_is_allowed() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b", "c")
    h.poll("c", 0, [(0, "a")])
    h.poll("c", 0, [(2, "c")], from_offset=2)
    verdict = classes(h)
    assert failing(verdict, "poll-skip") == ()
    (v,) = allowed(verdict, "poll-skip")
    assert (v.offsets, v.ops) == ((1,), ("c#0", "c#1"))


def test_consecutive_polls_do_not_skip() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b", "c")
    h.poll("c", 0, [(0, "a")])
    h.poll("c", 0, [], from_offset=1)
    h.poll("c", 0, [(1, "b"), (2, "c")], from_offset=1)
    assert anomalies(classes(h)) == {}


def test_int_poll_skip_inside_one_poll() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b", "c")
    h.poll("c", 0, [(0, "a"), (2, "c")])
    (v,) = failing(classes(h), "int-poll-skip")
    assert (v.value, v.offsets, v.ops) == ("b", (1,), ("c#0",))


def test_a_gap_no_record_is_known_in_is_not_a_skip() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 0)
    h.send("p0", 0, "c", "ok", 2)
    h.poll("c", 0, [(0, "a"), (2, "c")])
    assert anomalies(classes(h)) == {}


def test_nonmonotonic_poll_starts_before_the_previous_end() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b")
    h.poll("c", 0, [(0, "a"), (1, "b")])
    h.poll("c", 0, [(1, "b")], from_offset=2)
    (v,) = failing(classes(h), "nonmonotonic-poll")
    assert (v.value, v.offsets, v.process, v.ops) == ("b", (1, 1), "c", ("c#0", "c#1"))


def test_nonmonotonic_poll_after_a_seek_back_is_allowed() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b")
    h.poll("c", 0, [(0, "a"), (1, "b")])
    h.poll("c", 0, [(0, "a")], from_offset=0)
    verdict = classes(h)
    assert failing(verdict, "nonmonotonic-poll") == ()
    assert len(allowed(verdict, "nonmonotonic-poll")) == 1
    assert verdict.stats["consumed"] == {"1": 1, "2": 1}
    assert verdict.stats["consumed_most"] == "t-0 'a' 2 times"


def test_int_nonmonotonic_poll_goes_back_inside_one_poll() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b")
    h.poll("c", 0, [(0, "a"), (1, "b"), (0, "a")])
    (v,) = failing(classes(h), "int-nonmonotonic-poll")
    assert (v.value, v.offsets, v.ops) == ("a", (1, 0), ("c#0",))
    h2 = HistoryBuilder()
    _acked(h2, "a", "b")
    h2.poll("c", 0, [(0, "a"), (1, "b")])
    assert failing(classes(h2), "int-nonmonotonic-poll") == ()


def test_nonmonotonic_send_of_one_producer() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 1)
    h.send("p0", 0, "b", "ok", 0)
    h.send("p1", 0, "c", "ok", 2)  # another producer: its own order
    (v,) = failing(classes(h), "nonmonotonic-send")
    assert (v.value, v.offsets, v.process, v.ops) == ("b", (1, 0), "p0", ("p0#0", "p0#1"))


def test_nonmonotonic_send_with_acks_1_or_unclean_election_is_allowed() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 1, acks=1)
    h.send("p0", 0, "b", "ok", 0, acks=1)
    verdict = classes(h)
    assert failing(verdict, "nonmonotonic-send") == ()
    assert len(allowed(verdict, "nonmonotonic-send")) == 1
    h2 = HistoryBuilder()
    _acked(h2, "a", "b")
    assert anomalies(classes(h2)) == {}
    h3 = HistoryBuilder()  # an unclean leader hands out offsets again
    h3.send("p0", 0, "a", "ok", 1)
    h3.send("p0", 0, "b", "ok", 0)
    loose = classes(h3, unclean=True)
    assert failing(loose, "nonmonotonic-send") == ()
    assert len(allowed(loose, "nonmonotonic-send")) == 1


def test_the_worst_lag_names_the_ack_and_the_first_read() -> None:
    h = HistoryBuilder()
    _acked(h, "a", "b")
    h.poll("c", 0, [(0, "a")])
    h.now()
    h.poll("c", 0, [(1, "b")], from_offset=1)
    stats = classes(h).stats
    assert stats["worst_lag"] == "t-0 'b': acknowledged by p0#1, first read by c#1"
    assert stats["worst_lag_ns"] == 5  # acked at 4, read by the poll completing at 9
    assert stats["consumed"] == {"1": 2}


def test_inconsistent_offsets_after_an_acks_1_write_or_unclean_election_are_allowed() -> None:
    h = HistoryBuilder()
    h.send("p0", 0, "a", "ok", 0, acks=1)
    h.poll("c", 0, [(0, "b")])
    verdict = classes(h)
    assert failing(verdict, "inconsistent-offsets") == ()
    assert len(allowed(verdict, "inconsistent-offsets")) == 1
    h2 = HistoryBuilder()
    h2.send("p0", 0, "a", "ok", 0)
    h2.poll("c", 0, [(0, "b")])
    assert len(allowed(classes(h2, unclean=True), "inconsistent-offsets")) == 1
