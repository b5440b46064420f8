"""Every invariant's and every Jepsen queue class's violation renders as words and as links
into the run's event browser: one per event (`#node=..&line=..`) and per history operation
(`#op=..`), times in seconds since the run's start, never a raw wall-clock number. Each
kind of witness is timed by what proves it: its events, its operations (the final read's
on its partition), both; a cluster snapshot's, or one whose operations the page does not
hold, has no time."""

from __future__ import annotations

import re

import pytest

from pipeline.human import iso, seconds, shown_value
from pipeline.witnesses import MEANINGS, proof_times, witness
from rundir.checker.queue import QUEUE_CLASSES
from rundir.events import Event
from rundir.invariants import names
from rundir.results import Violation

STARTED = 1_700_000_001_000
INVARIANTS = sorted(v for k, v in vars(names).items() if k.isupper() and isinstance(v, str))
THIRTEEN_DIGITS = re.compile(r"\d{13}")


def _event_violation() -> Violation:
    events = (
        Event("broker1", 2, STARTED + 900, "controller_elected", {"controller_epoch": 2}),
        Event(
            "broker2",
            14,
            STARTED + 12_345,
            "leader_elected",
            {"topic": "t", "partition": 0, "registered_ms": STARTED + 5, "zxid": 2**45},
        ),
    )
    return Violation("controller epoch 2", "won by broker1 and broker2", events=events)


def _record_violation() -> Violation:
    return Violation(
        "t-1",
        "acknowledged, absent from the final read",
        value="producer-0-7",
        offsets=(3, 4),
        process="producer-0",
        ops=("producer-0#12", "final-read"),
    )


def test_every_invariant_and_queue_class_has_its_meaning() -> None:
    assert set(INVARIANTS) | set(QUEUE_CLASSES) == set(MEANINGS)


@pytest.mark.parametrize("name", INVARIANTS + list(QUEUE_CLASSES))
def test_an_events_witness_is_words_and_links_to_each_event(name: str) -> None:
    shown = witness(name, _event_violation().to_json(), STARTED)
    assert shown.invariant == name
    assert shown.meaning == MEANINGS[name]
    assert shown.anomaly is (name in QUEUE_CLASSES)
    assert shown.words == "controller epoch 2: won by broker1 and broker2"
    assert [p.href for p in shown.proofs] == [
        "events.html#node=broker1&line=2",
        "events.html#node=broker2&line=14",
    ]
    first, second = (p.text for p in shown.proofs)
    assert first == "broker1 line 2 at 0.900 s: controller_elected (controller_epoch 2)"
    assert second.startswith("broker2 line 14 at 12.345 s: leader_elected (topic t, partition 0")
    assert "registered_ms 0.005 s" in second
    assert "zxid 0x200000000000" in second
    assert not any(THIRTEEN_DIGITS.search(p.text) for p in shown.proofs)


@pytest.mark.parametrize("name", INVARIANTS + list(QUEUE_CLASSES))
def test_a_records_witness_names_the_record_and_links_each_operation(name: str) -> None:
    shown = witness(name, _record_violation().to_json(), STARTED)
    assert shown.words == (
        "t-1: acknowledged, absent from the final read; the record 'producer-0-7' at "
        "offsets 3, 4, sent by producer-0"
    )
    assert [p.href for p in shown.proofs] == [
        "events.html#op=producer-0%2312",
        "events.html#op=final-read",
    ]
    first, second = (p.text for p in shown.proofs)
    assert first.endswith("operation 12 of producer-0")
    assert second.endswith("the final read")


@pytest.mark.parametrize(
    ("name", "explanation", "roles"),
    [
        (
            "lost-write",
            "acknowledged at 3, never read",
            ("the acknowledging send", "the read of a higher offset"),
        ),
        ("unseen", "acknowledged, not in the final read", ("the acknowledging send", None)),
        (
            names.ACKNOWLEDGED_WRITES,
            "lost_writes: acknowledged, absent from the final read at offsets [3]",
            ("the acknowledging send", "a poll that had read it"),
        ),
        (names.ACKNOWLEDGED_WRITES, "reordering: acked after 'a'", (None, None)),
    ],
)
def test_a_lost_writes_operations_say_what_they_prove(
    name: str, explanation: str, roles: tuple[str | None, ...]
) -> None:
    violation = Violation("t-1", explanation, ops=("producer-0#12", "consumer-1#40"))
    shown = witness(name, violation.to_json(), STARTED)
    words = ("operation 12 of producer-0", "operation 40 of consumer-1")
    assert [p.text for p in shown.proofs] == [
        f"{role}: {w}" if role else w for role, w in zip(roles, words, strict=True)
    ]
    assert [p.href for p in shown.proofs] == [
        "events.html#op=producer-0%2312",
        "events.html#op=consumer-1%2340",
    ]


def test_one_offset_is_said_in_the_singular() -> None:
    violation = Violation("t-1", "unseen", value="v", offsets=(7,)).to_json()
    assert witness("unseen", violation, STARTED).words == "t-1: unseen; the record 'v' at offset 7"
    violation = Violation("t-1", "lost", value="v").to_json()
    assert (
        witness("lost-write", violation, STARTED).words == "t-1: lost; the record 'v' at no offset"
    )


def test_a_snapshot_violation_has_words_and_no_proof() -> None:
    shown = witness(names.CONVERGES_AFTER_HEAL, Violation("t-0", "leaders differ").to_json(), 0)
    assert (shown.words, shown.proofs) == ("t-0: leaders differ", ())


def test_values_for_people_hold_no_wall_clock_milliseconds() -> None:
    assert seconds(STARTED + 1_500, STARTED) == "1.500 s"
    assert iso(STARTED) == "2023-11-14T22:13:21.000+00:00"
    assert shown_value("ts", STARTED - 250, STARTED) == "-0.250 s"
    assert shown_value("started_ms", STARTED, None) == iso(STARTED)
    assert shown_value("offset", 10**13, STARTED) == hex(10**13)
    assert shown_value("isr", [1, 2], STARTED) == "[1, 2]"
    assert shown_value("unclean", False, STARTED) == "false"
    assert shown_value("zxid", None, STARTED) == "null"


def _op(op: str, wall_ms: int, topic: str = "t", partition: int = 1) -> dict[str, object]:
    """One history line as a run's page holds it (`pipeline.page_rows`)."""
    return {"op": op, "type": "ok", "wall_ms": wall_ms, "topic": topic, "partition": partition}


def test_an_events_witness_spans_its_events_times() -> None:
    shown = witness(names.ONE_CONTROLLER_PER_EPOCH, _event_violation().to_json(), STARTED)
    assert (shown.since, shown.at) == (0.9, 12.345)


def test_an_operations_witness_spans_its_operations_invoke_to_completion() -> None:
    ops = [
        _op("producer-0#12", STARTED + 2_000),
        _op("producer-0#12", STARTED + 2_250),
        _op("consumer-1#40", STARTED + 7_500),
        _op("consumer-1#41", STARTED + 9_000),  # not named by the violation
    ]
    violation = Violation("t-1", "lost", ops=("producer-0#12", "consumer-1#40")).to_json()
    assert proof_times(violation, STARTED, ops) == (2.0, 2.25, 7.5)
    shown = witness("lost-write", violation, STARTED, ops)
    assert (shown.since, shown.at) == (2.0, 7.5)


def test_the_final_read_is_timed_by_its_operations_on_the_violations_partition() -> None:
    ops = [
        _op("producer-0#12", STARTED + 2_000),
        _op("final-read#1", STARTED + 25_000, partition=0),
        _op("final-read#2", STARTED + 25_010, partition=1),
        _op("final-read#2", STARTED + 25_015, partition=1),
    ]
    shown = witness(names.ACKNOWLEDGED_WRITES, _record_violation().to_json(), STARTED, ops)
    assert (shown.since, shown.at) == (2.0, 25.015)


def test_a_witness_and_events_and_operations_together_span_both() -> None:
    events = (Event("broker2", 5, STARTED + 30_000, "isr_changed", {"topic": "t"}),)
    violation = Violation("t-1", "truncated", events=events, ops=("producer-0#12",)).to_json()
    ops = [_op("producer-0#12", STARTED + 1_000)]
    assert proof_times(violation, STARTED, ops) == (1.0, 30.0)


@pytest.mark.parametrize(
    ("violation", "ops"),
    [
        (Violation("t-0", "leaders differ"), []),  # a cluster snapshot's: nothing to time
        (Violation("t-1", "lost", ops=("producer-0#12",)), []),  # its operation not held
        (Violation("t-1", "lost", ops=("final-read",)), [_op("final-read#1", STARTED, "u")]),
    ],
)
def test_a_witness_with_nothing_timed_has_no_time(
    violation: Violation, ops: list[dict[str, object]]
) -> None:
    shown = witness(names.ACKNOWLEDGED_WRITES, violation.to_json(), STARTED, ops)
    assert (shown.since, shown.at) == (None, None)
