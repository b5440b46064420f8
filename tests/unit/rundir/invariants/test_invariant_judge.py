"""`judge` runs every invariant; its verdict renders as JSON and as a text table; `Event`
decodes a log line and refuses another schema version."""

from __future__ import annotations

import json

import pytest

from eventlog import (
    SCHEMA_VERSION,
    BrokerRegistered,
    ControllerElected,
    ControllerObserved,
    NodeStarted,
    RequestAccepted,
)
from rundir.checker import QUEUE_CLASSES
from rundir.events import since_process_at
from rundir.invariants import Event, EventFormatError, RunInputs, judge
from rundir.invariants.judge import during_run
from rundir.invariants.names import SPEC_INVARIANTS
from rundir.invariants.testing import EventLogBuilder
from rundir.results import InvariantResult, Violation
from rundir.testing import HistoryBuilder

NAMES = [
    "one_controller_per_epoch",
    "controller_epoch_fencing",
    "broker_epoch_fencing",
    "one_leader_per_leader_epoch",
    "acknowledged_writes",
    "converges_after_heal",
    *SPEC_INVARIANTS,
    *QUEUE_CLASSES,
]


def _split_brain() -> EventLogBuilder:
    b = EventLogBuilder()
    b.emit(
        "broker1",
        ControllerElected(controller_id=1, controller_epoch=2, epoch_zk_version=0, epoch_zxid=None),
    )
    b.emit(
        "broker2",
        ControllerElected(controller_id=2, controller_epoch=2, epoch_zk_version=0, epoch_zxid=None),
    )
    return b


def test_judge_runs_every_invariant_in_order() -> None:
    h = HistoryBuilder()
    h.send("producer-0", 0, "a", "ok", 0)
    verdict = judge(RunInputs(EventLogBuilder().logs(), h.ops, h.final_read({0: ["a"]})))
    assert [r.name for r in verdict.results] == NAMES
    assert verdict.ok
    assert not verdict.result("converges_after_heal").judged
    assert not verdict.result("log_matching").judged
    assert "no audit.json" in verdict.result("log_matching").note


def test_one_violated_invariant_fails_the_verdict() -> None:
    verdict = judge(RunInputs(_split_brain().logs()))
    assert not verdict.ok
    assert not verdict.result("one_controller_per_epoch").ok
    assert verdict.result("controller_epoch_fencing").ok
    with pytest.raises(KeyError):
        verdict.result("nothing")


def test_the_verdict_as_json_names_the_offending_events() -> None:
    document = judge(RunInputs(_split_brain().logs())).to_json()
    json.dumps(document)  # serialisable as is
    assert document["ok"] is False
    assert document["not_judged"] == [
        "acknowledged_writes",
        "converges_after_heal",
        "weak_isr",
        "strong_isr",
        "log_matching",
        *QUEUE_CLASSES,
    ]
    first = document["invariants"][0]
    assert first["name"] == "one_controller_per_epoch"
    assert [
        (e["node"], e["line"], e["kind"], e["fields"]["controller_epoch"])
        for e in first["violations"][0]["events"]
    ] == [
        ("broker1", 1, "controller_elected", 2),
        ("broker2", 1, "controller_elected", 2),
    ]


def test_the_table_has_a_row_per_invariant_and_the_violations() -> None:
    table = judge(RunInputs(_split_brain().logs())).table()
    lines = table.splitlines()
    assert lines[0] == "verdict: NOT OK"
    assert lines[1].split() == ["invariant", "result", "checked", "violations"]
    assert lines[2].split()[:4] == ["one_controller_per_epoch", "VIOLATED", "2", "1"]
    assert "broker1:1 @" in lines[3]
    assert "controller_elected" in lines[3]
    assert any(line.startswith("acknowledged_writes") and "not judged" in line for line in lines)


def test_the_table_elides_violations_beyond_its_examples() -> None:
    b = EventLogBuilder()
    for epoch in range(1, 5):
        b.emit(
            "broker1",
            ControllerElected(
                controller_id=1, controller_epoch=epoch, epoch_zk_version=0, epoch_zxid=None
            ),
        )
        b.emit(
            "broker2",
            ControllerElected(
                controller_id=2, controller_epoch=epoch, epoch_zk_version=0, epoch_zxid=None
            ),
        )
    assert "... and 2 more" in judge(RunInputs(b.logs())).table(examples=2)


def test_an_event_line_decodes_with_its_place() -> None:
    record = {
        "v": SCHEMA_VERSION,
        "ts": 5,
        "node": "broker1",
        "kind": "node_started",
        "broker_id": 1,
    }
    event = Event.from_record(record, 7)
    assert (event.node, event.line, event.ts, event.kind) == ("broker1", 7, 5, "node_started")
    assert event.fields == {"broker_id": 1}


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"v": 99, "ts": 5, "node": "b", "kind": "k"}, "schema version 99"),
        ({"v": SCHEMA_VERSION, "ts": "5", "node": "b", "kind": "k"}, "ts must be an int"),
        ({"v": SCHEMA_VERSION, "ts": 5, "node": "b"}, "node and kind"),
    ],
)
def test_a_bad_event_line_is_a_clear_error(record: dict[str, object], message: str) -> None:
    with pytest.raises(EventFormatError, match=f"line 3: .*{message}"):
        Event.from_record(record, 3)


def test_events_can_be_kept_in_sets() -> None:
    record = {"v": SCHEMA_VERSION, "ts": 5, "node": "b", "kind": "k", "list": [1]}
    assert len({Event.from_record(record, 1), Event.from_record(record, 1)}) == 1


def _obeys_an_older_epoch(b: EventLogBuilder, node: str) -> None:
    b.emit(
        node,
        RequestAccepted(
            api="UpdateMetadata",
            controller_epoch=4,
            controller_id=1,
            request_broker_epoch=-1,
            broker_epoch=0,
            partitions=0,
            partition_errors=0,
        ),
    )
    b.emit(
        node,
        RequestAccepted(
            api="UpdateMetadata",
            controller_epoch=3,
            controller_id=1,
            request_broker_epoch=-1,
            broker_epoch=0,
            partitions=0,
            partition_errors=0,
        ),
    )


def test_processes_that_ended_before_the_run_are_not_judged() -> None:
    b = EventLogBuilder()
    b.emit("broker1", NodeStarted(broker_id=1, zk_connect="zk"))
    _obeys_an_older_epoch(b, "broker1")  # a build of the previous run (a bug switch on)
    b.emit("broker1", NodeStarted(broker_id=1, zk_connect="zk"))  # recreated
    started = b.emit("broker2", NodeStarted(broker_id=2, zk_connect="zk")).ts
    b.advance(10)
    since = started + 5
    assert judge(RunInputs(b.logs(), since_ms=since)).result("controller_epoch_fencing").ok
    assert not judge(RunInputs(b.logs())).result("controller_epoch_fencing").ok

    _obeys_an_older_epoch(b, "broker2")  # the process running when the run started
    fencing = judge(RunInputs(b.logs(), since_ms=since)).result("controller_epoch_fencing")
    assert [v.subject for v in fencing.violations] == ["broker2 controller epoch 3"]


def test_since_process_at_keeps_the_life_running_at_the_start() -> None:
    b = EventLogBuilder()
    old = b.emit("broker1", NodeStarted(broker_id=1, zk_connect="zk"))
    current = b.emit("broker1", NodeStarted(broker_id=1, zk_connect="zk"))
    during = b.emit(
        "broker1",
        ControllerElected(controller_id=1, controller_epoch=2, epoch_zk_version=0, epoch_zxid=None),
    )
    later = b.emit("broker1", NodeStarted(broker_id=1, zk_connect="zk"))
    quiet = b.emit("broker2", ControllerObserved(controller_id=1))
    logs = since_process_at(b.logs(), during.ts)
    assert list(logs["broker1"]) == [current, during, later]
    assert list(logs["broker2"]) == [quiet]
    assert list(since_process_at(b.logs(), 0)["broker1"]) == [old, current, during, later]


def _bounced_broker_obeys_its_old_epoch(b: EventLogBuilder) -> int:
    """A broker process registers, is bounced, and the new one obeys a request addressed
    to the old registration (what a build with `kip-380` does); the time of the new
    registration."""
    b.emit("broker2", NodeStarted(broker_id=2, zk_connect="zk"))
    b.emit(
        "broker2",
        BrokerRegistered(
            broker_id=2,
            broker_epoch=327,
            previous_broker_epoch=-1,
            reregistration=False,
            session_id="0x1",
        ),
    )
    b.emit("broker2", NodeStarted(broker_id=2, zk_connect="zk"))
    registered = b.emit(
        "broker2",
        BrokerRegistered(
            broker_id=2,
            broker_epoch=350,
            previous_broker_epoch=-1,
            reregistration=False,
            session_id="0x1",
        ),
    )
    b.emit(
        "broker2",
        RequestAccepted(
            api="UpdateMetadata",
            controller_epoch=2,
            request_broker_epoch=327,
            broker_epoch=350,
            controller_id=1,
            partitions=0,
            partition_errors=0,
        ),
    )
    return registered.ts


def test_violations_of_an_earlier_run_by_the_same_processes_are_not_this_runs() -> None:
    b = EventLogBuilder()
    _bounced_broker_obeys_its_old_epoch(b)  # an earlier run on the same cluster
    b.advance(10)
    since = b.emit(
        "broker2",
        BrokerRegistered(
            broker_id=2,
            broker_epoch=368,
            previous_broker_epoch=-1,
            reregistration=False,
            session_id="0x1",
        ),
    ).ts
    b.emit(
        "broker2",
        RequestAccepted(
            api="UpdateMetadata",
            controller_epoch=4,
            request_broker_epoch=368,
            broker_epoch=368,
            controller_id=1,
            partitions=0,
            partition_errors=0,
        ),
    )
    logs = b.logs()
    assert not judge(RunInputs(logs)).ok  # the whole log holds the earlier violation
    verdict = judge(RunInputs(logs, since_ms=since))
    fencing = verdict.result("broker_epoch_fencing")
    assert verdict.ok
    assert fencing.checked == 2
    assert fencing.note == "1 violations before the run started not judged"


def test_a_violation_shown_during_the_run_is_judged_though_it_began_before() -> None:
    b = EventLogBuilder()
    since = _bounced_broker_obeys_its_old_epoch(b) + 1  # the run starts after registering
    verdict = judge(RunInputs(b.logs(), since_ms=since))
    fencing = verdict.result("broker_epoch_fencing")
    assert len(fencing.violations) == 1
    assert fencing.violations[0].events[0].ts < since <= fencing.violations[0].events[-1].ts
    assert fencing.note == ""


def test_during_run_keeps_violations_shown_by_no_event() -> None:
    result = InvariantResult("x", (Violation("t-0", "lost"),), 1, "a note")
    assert during_run(result, since_ms=10**15) is result
