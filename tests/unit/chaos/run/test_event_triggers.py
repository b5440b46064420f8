"""Steps started by the cluster's events: the trigger in a schedule, and the event logs
read as they grow (the step loop performing triggered steps: test_step_loop.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chaos.errors import BadTiming, ScheduleError, ScheduleFormatError
from chaos.generator.schedule import FaultSpec, Schedule, Step, Trigger
from chaos.generator.timeline import CueType, timeline
from chaos.run.event_watch import EventTail, EventWatch
from rundir.host_time import ClockAnchor

ONLINE = Trigger("partition_state_change", (("target", "OnlinePartition"),), within_s=3)


def _append(path: Path, *events: dict[str, Any], torn: str = "") -> None:
    with open(path, "a", encoding="utf-8") as f:
        for event in events:
            f.write(json.dumps(event) + "\n")
        f.write(torn)


def _event(kind: str, ts: int, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "ts": ts, "node": "broker1", "kind": kind, **fields}


def test_a_trigger_matches_its_kind_and_every_named_field() -> None:
    assert ONLINE.matches(_event("partition_state_change", 1, target="OnlinePartition"))
    assert not ONLINE.matches(_event("partition_state_change", 1, target="OfflinePartition"))
    assert not ONLINE.matches(_event("partition_state_change", 1))
    assert not ONLINE.matches(_event("leader_elected", 1, target="OnlinePartition"))
    assert ONLINE.describe() == "on partition_state_change target=OnlinePartition within 3s"


@pytest.mark.parametrize(
    ("kind", "match", "within_s", "error"),
    [
        ("no_such_event", (), 5, ScheduleError),
        ("leader_elected", (("ts", 3),), 5, ScheduleError),
        ("leader_elected", (("isr", [1, 2]),), 5, ScheduleError),
        ("leader_elected", (), 0, BadTiming),
        ("leader_elected", (), 121, BadTiming),
    ],
)
def test_a_bad_trigger_is_refused(
    kind: str, match: tuple[tuple[str, Any], ...], within_s: float, error: type[Exception]
) -> None:
    with pytest.raises(error):
        Trigger(kind, match, within_s)


def test_a_triggered_step_round_trips_through_json_and_ends_at_the_latest() -> None:
    step = Step(10, 16, FaultSpec("pause", "zk:1"), ONLINE)
    schedule = Schedule(7, (step,), heal_at_s=40, end_s=60)
    again = Schedule.from_json(json.loads(json.dumps(schedule.to_json())))
    assert again == schedule
    assert step.ends_s == 29
    assert "on partition_state_change target=OnlinePartition" in schedule.describe()
    with pytest.raises(BadTiming, match="ends after heal_at_s"):
        Schedule(7, (step,), heal_at_s=28, end_s=60)
    broken = schedule.to_json()
    broken["steps"][0]["on_event"] = {"kind": "leader_elected", "when": 3}
    with pytest.raises(ScheduleFormatError, match="unknown fields when"):
        Schedule.from_json(broken)


def test_an_optional_trigger_says_so_in_json_and_in_words() -> None:
    maybe = Trigger("leader_elected", within_s=5, optional=True)
    schedule = Schedule(7, (Step(10, 16, FaultSpec("pause", "zk:1"), maybe),), 40, 60)
    data = schedule.to_json()
    assert data["steps"][0]["on_event"]["optional"] is True
    assert Schedule.from_json(json.loads(json.dumps(data))) == schedule
    assert "within 5s, if it comes" in schedule.describe()
    plain = Schedule(7, (Step(10, 16, FaultSpec("pause", "zk:1"), ONLINE),), 40, 60)
    assert "optional" not in plain.to_json()["steps"][0]["on_event"]
    data["steps"][0]["on_event"]["optional"] = "yes"
    with pytest.raises(ScheduleFormatError, match="optional must be true or false"):
        Schedule.from_json(data)


def test_a_triggered_step_has_a_start_cue_and_no_stop_cue() -> None:
    steps = (
        Step(1, 2, FaultSpec("pause", "zk:1")),
        Step(1, 2, FaultSpec("pause", "zk:2"), ONLINE),
    )
    cues = timeline(Schedule(None, steps, heal_at_s=10, end_s=12))
    assert [(c.type, c.index) for c in cues if c.index is not None] == [
        (CueType.START, 0),
        (CueType.START, 1),
        (CueType.STOP, 0),
    ]


def test_the_tail_reads_only_what_was_appended_and_complete_lines(tmp_path: Path) -> None:
    old = tmp_path / "broker1.jsonl"
    _append(old, _event("node_started", 1))
    tail = EventTail(tmp_path)
    assert tail.poll() == []
    _append(old, _event("broker_change", 2), torn='{"v": 1, "ts": 3, "kind": "leader_')
    _append(tmp_path / "broker2.jsonl", _event("node_started", 4), torn="not json\n")
    assert [e["kind"] for e in tail.poll()] == ["broker_change", "node_started"]
    _append(old, torn='elected"}\n')
    assert [e["kind"] for e in tail.poll()] == ["leader_elected"]
    old.write_text(json.dumps(_event("node_started", 9)) + "\n")  # the log began again
    assert [e["ts"] for e in tail.poll()] == [9]
    assert EventTail(tmp_path / "missing").poll() == []


def test_a_watch_fires_on_the_first_event_from_its_time_on_and_expires_without_one(
    tmp_path: Path,
) -> None:
    log = tmp_path / "broker1.jsonl"
    log.touch()
    watch = EventWatch(EventTail(tmp_path))
    watch.arm(0, ONLINE, since_ms=1000, deadline=50.0)
    watch.arm(1, ONLINE, since_ms=1000, deadline=50.0)
    watch.arm(2, Trigger("broker_change"), since_ms=1000, deadline=10.0)
    _append(
        log,
        _event("partition_state_change", 999, target="OnlinePartition"),
        _event("partition_state_change", 1000, target="OfflinePartition"),
    )
    assert watch.due(now=5.0) == ([], [])
    _append(log, _event("partition_state_change", 1200, target="OnlinePartition"))
    fired, expired = watch.due(now=10.0)
    assert [(f.index, f.event["ts"]) for f in fired] == [(0, 1200), (1, 1200)]
    assert expired == [2]
    assert not watch.waiting
    watch.arm(3, ONLINE, since_ms=1100, deadline=60.0)  # armed later: the event was read
    assert [f.index for f in watch.due(now=11.0)[0]] == [3]
    watch.arm(4, ONLINE, since_ms=5000, deadline=60.0)
    assert watch.disarm_all() == [4]


def test_a_trigger_places_events_by_the_monotonic_clock_not_the_nodes_wall_clock(
    tmp_path: Path,
) -> None:
    """A node whose wall clock is ten minutes off fires a trigger armed before its event,
    and not one armed after it."""
    path = tmp_path / "broker1.jsonl"
    path.write_text("")
    anchor = ClockAnchor(wall_ms=1_000_000_000, mono_ms=5_000)
    watch = EventWatch(EventTail(tmp_path), anchor)
    behind = _event("partition_state_change", 1_000_000_000 - 600_000, target="OnlinePartition")
    ahead = _event("leader_elected", 1_000_000_000 + 600_000)
    _append(path, {**behind, "mono_ms": 6_000}, {**ahead, "mono_ms": 6_000})
    watch.arm(0, ONLINE, since_ms=1_000_000_500, deadline=1.0)
    watch.arm(1, Trigger("leader_elected", (), within_s=3), since_ms=1_000_002_000, deadline=1.0)
    fired, expired = watch.due(now=2.0)
    assert [f.index for f in fired] == [0]
    assert expired == [1]
