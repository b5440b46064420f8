"""Every invariant's and every Jepsen queue class's violation renders as words and as links
into the run's event browser: one per event (`#node=..&line=..`) and per history operation
(`#op=..`), times in seconds since the run's start, never a raw wall-clock number."""

from __future__ import annotations

import re

import pytest

from pipeline.human import iso, seconds, shown_value
from pipeline.witnesses import MEANINGS, witness
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
