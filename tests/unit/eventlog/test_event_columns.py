"""A round of many partitions written as one event of columns, and `eventlog.expand`, which
turns it back into the per-partition facts every reader sees: the same records, field for
field and in the same order, as the per-partition events a version 1 writer wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eventlog import (
    ROUND_KINDS,
    Event,
    EventDecodeError,
    EventLog,
    HighWatermarkMoved,
    IsrChanged,
    IsrShrinkFailed,
    IsrShrinksFailed,
    IsrsShrunk,
    LeaderElected,
    LeaderElectionFailed,
    LeaderElectionsFailed,
    LeadersElected,
    LeadershipsStarted,
    decode,
    event_record,
    expand,
    expand_numbered,
    gather,
    read_events,
    read_numbered_events,
)
from eventlog.log import event_log_path
from eventlog.testing import RecordingEventLog

ELECTED = LeadersElected(
    controller_epoch=4,
    strategy="offline",
    topics=["a", "b", "a"],
    partitions=[0, 3, 1],
    leaders=[2, 3, 2],
    leader_epochs=[5, 1, 9],
    isrs=[[2], [3, 2], [2, 1]],
    zk_versions=[6, 2, 10],
    zxids=[0x100000012, None, 0x100000013],
    uncleans=[False, True, False],
)
SINGLES = [
    LeaderElected(
        topic="a",
        partition=0,
        leader=2,
        leader_epoch=5,
        isr=[2],
        zk_version=6,
        zxid=0x100000012,
        controller_epoch=4,
        strategy="offline",
        unclean=False,
    ),
    LeaderElected(
        topic="b",
        partition=3,
        leader=3,
        leader_epoch=1,
        isr=[3, 2],
        zk_version=2,
        zxid=None,
        controller_epoch=4,
        strategy="offline",
        unclean=True,
    ),
    LeaderElected(
        topic="a",
        partition=1,
        leader=2,
        leader_epoch=9,
        isr=[2, 1],
        zk_version=10,
        zxid=0x100000013,
        controller_epoch=4,
        strategy="offline",
        unclean=False,
    ),
]
#: A field taken out of the line.
MISSING = "<missing>"


def test_a_round_expands_into_the_records_of_its_single_events() -> None:
    record = event_record(ELECTED, 1_000, "broker2", 17, 55)

    facts = expand(record)

    wanted = [event_record(e, 1_000, "broker2", 17, 55) for e in SINGLES]
    assert facts == wanted
    assert [list(f) for f in facts] == [list(w) for w in wanted]  # key order too
    assert [decode(f) for f in facts] == SINGLES


def test_an_isr_shrink_round_expands_into_the_controllers_isr_changed() -> None:
    shrunk = IsrsShrunk(
        reason="replica offline",
        by="controller",
        replica=1,
        controller_epoch=3,
        topics=["t"],
        partitions=[7],
        leaders=[-1],
        leader_epochs=[4],
        isrs=[[1]],
        zk_versions=[8],
        zxids=[99],
    )
    single = IsrChanged(
        topic="t",
        partition=7,
        reason="replica offline",
        by="controller",
        replica=1,
        leader=-1,
        leader_epoch=4,
        isr=[1],
        zk_version=8,
        zxid=99,
        controller_epoch=3,
    )
    (fact,) = expand(event_record(shrunk, 5, "broker3", 2, 9))
    assert fact == event_record(single, 5, "broker3", 2, 9)
    assert list(fact) == list(event_record(single, 5, "broker3", 2, 9))


@pytest.mark.parametrize(
    ("failures", "singles"),
    [
        (
            LeaderElectionsFailed(
                controller_epoch=2, topics=["t", "u"], partitions=[0, 1], reasons=["x", "y"]
            ),
            [
                LeaderElectionFailed(topic="t", partition=0, reason="x", controller_epoch=2),
                LeaderElectionFailed(topic="u", partition=1, reason="y", controller_epoch=2),
            ],
        ),
        (
            IsrShrinksFailed(
                replica=3, controller_epoch=2, topics=["t"], partitions=[5], reasons=["z"]
            ),
            [IsrShrinkFailed(topic="t", partition=5, replica=3, reason="z", controller_epoch=2)],
        ),
    ],
)
def test_failure_rounds_expand_into_their_single_failures(
    failures: Event, singles: list[Event]
) -> None:
    facts = expand(event_record(failures, 1, "broker1"))
    assert facts == [event_record(s, 1, "broker1") for s in singles]


def test_every_round_kind_expands_and_other_records_pass_through_as_they_are() -> None:
    assert {
        "leaders_elected",
        "leader_elections_failed",
        "isrs_shrunk",
        "isr_shrinks_failed",
        "leaderships_started",
    } == ROUND_KINDS
    other = {"v": 2, "ts": 1, "node": "n", "kind": "leader_elected", "topic": "t"}
    assert expand(other)[0] is other
    assert expand({"kind": ["not", "a", "name"]}) == [{"kind": ["not", "a", "name"]}]


def test_a_round_of_no_partitions_has_no_facts() -> None:
    empty = LeaderElectionsFailed(controller_epoch=1, topics=[], partitions=[], reasons=[])
    assert expand(event_record(empty, 1, "b")) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"zxids": [1, 2]}, "different lengths"),
        ({"isrs": None}, "not a list"),
        ({"leaders": MISSING}, "leaders missing"),
        ({"strategy": MISSING}, "strategy missing"),
    ],
)
def test_a_round_that_does_not_expand_is_named_by_its_line(
    change: dict[str, object], message: str
) -> None:
    record = event_record(ELECTED, 1, "b")
    for name, value in change.items():
        if value == MISSING:
            del record[name]
        else:
            record[name] = value
    with pytest.raises(EventDecodeError, match=message):
        expand(record)
    with pytest.raises(EventDecodeError, match=f"line 4: leaders_elected: .*{message}"):
        expand_numbered([(3, {"kind": "node_started"}), (4, record)])


def test_the_log_readers_expand_a_round_and_its_facts_keep_its_line(tmp_path: Path) -> None:
    log = EventLog(tmp_path, "broker2")
    log.emit(ELECTED)
    log.emit(SINGLES[0])  # a single event of the same kind reads as before
    log.close()
    path = event_log_path(tmp_path, "broker2")
    assert len(path.read_text().splitlines()) == 2

    numbered = read_numbered_events(path)

    assert [n for n, _ in numbered] == [1, 1, 1, 2]
    assert [decode(r) for _, r in numbered] == [*SINGLES, SINGLES[0]]
    assert {r["seq"] for _, r in numbered[:3]} == {1}
    assert read_events(path) == [r for _, r in numbered]


def test_a_version_1_log_of_single_events_reads_unchanged(tmp_path: Path) -> None:
    path = event_log_path(tmp_path, "broker1")
    path.parent.mkdir(parents=True)
    lines = [{**event_record(e, 7, "broker1", i, 3), "v": 1} for i, e in enumerate(SINGLES, 1)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    assert read_numbered_events(path) == list(enumerate(lines, 1))


def test_the_recording_log_shows_a_rounds_facts_by_their_kind_and_the_round_by_its() -> None:
    log = RecordingEventLog()
    log.emit(ELECTED)

    assert log.of_type(LeaderElected) == SINGLES
    assert [e["kind"] for e in log.events] == ["leaders_elected"]
    assert log.of_type(LeadersElected) == [ELECTED]


def test_gather_is_the_inverse_of_expand() -> None:
    facts = [
        HighWatermarkMoved(
            topic="t",
            partition=p,
            leader_epoch=4,
            reason="leader",
            high_watermark=p,
            log_end_offset=p + 2,
            epoch_start_offset=p + 2,
            isr=[1, 2],
            isr_log_end_offsets=[p + 2, -1],
            skipped=0,
        )
        for p in range(3)
    ]
    started = gather(LeadershipsStarted, facts, reason="leader")
    assert started.partitions == [0, 1, 2]
    assert started.isrs_log_end_offsets == [[2, -1], [3, -1], [4, -1]]
    assert expand(event_record(started, 7, "broker1")) == [
        event_record(f, 7, "broker1") for f in facts
    ]
