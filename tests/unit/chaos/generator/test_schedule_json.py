"""`schedule.json`: a schedule written and read back is the same value; a file of another
version, with a missing or unknown field, a wrong type or a bad step is refused with an
error naming the file and the step. Files live under `tmp_path`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chaos.errors import BadParams, BadTiming, ScheduleFormatError, UnknownRole
from chaos.generator.random_mix import random_mix
from chaos.generator.schedule import (
    SCHEDULE_VERSION,
    Action,
    FaultSpec,
    Schedule,
    Step,
    read_schedule,
    write_schedule,
)


def _schedule() -> Schedule:
    return Schedule(
        42,
        (
            Step(10, 15, FaultSpec.of("kill", "controller")),
            Step(30, 0, FaultSpec.of("bounce", "broker:2")),
            Step(35.5, 10, FaultSpec.of("partition", "all", {"grudge": "bridge"})),
        ),
        heal_at_s=50,
        end_s=75,
        actions=(Action(12, "reassign", (("topic", "moving"), ("shift", 2))),),
    )


def test_a_schedule_survives_a_round_trip_through_its_file(tmp_path: Path) -> None:
    path = tmp_path / "schedule.json"
    write_schedule(path, _schedule())
    assert read_schedule(path) == _schedule()
    data = json.loads(path.read_text())
    assert data["version"] == SCHEDULE_VERSION
    assert data["steps"][2] == {
        "at_s": 35.5,
        "duration_s": 10.0,
        "kind": "partition",
        "target": "all",
        "params": {"grudge": "bridge"},
    }


@given(seed=st.integers(min_value=0, max_value=2**32), duration=st.floats(60, 600))
@settings(max_examples=50, deadline=None)
def test_random_mixes_survive_a_json_round_trip(seed: int, duration: float) -> None:
    schedule = random_mix(seed, duration)
    assert Schedule.from_json(json.loads(json.dumps(schedule.to_json()))) == schedule


def test_params_left_out_take_their_defaults_and_actions_may_be_left_out() -> None:
    data = _schedule().to_json()
    del data["actions"]
    del data["steps"][0]["params"]
    data["steps"][2]["params"] = {}
    schedule = Schedule.from_json(data)
    assert schedule.actions == ()
    assert schedule.steps[2].fault.param("grudge") == "halves"


def _edited(edit: Any) -> dict[str, Any]:
    data = _schedule().to_json()
    edit(data)
    return data


@pytest.mark.parametrize(
    ("data", "error", "words"),
    [
        ([], ScheduleFormatError, "schedule must be a JSON object, got list"),
        (_edited(lambda d: d.update(version=2)), ScheduleFormatError, "version 2 is not"),
        (_edited(lambda d: d.pop("end_s")), ScheduleFormatError, "schedule lacks end_s"),
        (_edited(lambda d: d.update(extra=1)), ScheduleFormatError, "unknown fields extra"),
        (_edited(lambda d: d.update(steps={})), ScheduleFormatError, "steps must be a JSON array"),
        (
            _edited(lambda d: d["steps"][1].pop("target")),
            ScheduleFormatError,
            "step 1 lacks target",
        ),
        (
            _edited(lambda d: d["steps"][1].update(target="zk:1")),
            UnknownRole,
            "step 1: bounce acts on brokers",
        ),
        (
            _edited(lambda d: d["steps"][2].update(params={"grudge": 3})),
            BadParams,
            "step 2: partition: grudge must be",
        ),
        (
            _edited(lambda d: d["steps"][2].update(params=[1])),
            ScheduleFormatError,
            "step 2: params must be a JSON object",
        ),
        (
            _edited(lambda d: d["actions"][0].update(params={"topic": ""})),
            BadParams,
            "action 0: reassign: topic must be a topic name",
        ),
        (_edited(lambda d: d.update(heal_at_s=20)), BadTiming, "step 0"),
    ],
)
def test_bad_schedule_objects_are_refused_with_the_place_named(
    data: object, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        Schedule.from_json(data)


def test_a_file_that_is_not_json_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "schedule.json"
    path.write_text('{"version": 1, ')
    with pytest.raises(ScheduleFormatError, match=r"schedule\.json: not JSON"):
        read_schedule(path)
    path.write_text(json.dumps(_edited(lambda d: d.update(version="1"))))
    with pytest.raises(ScheduleFormatError, match=r"schedule\.json: schedule version '1'"):
        read_schedule(path)


def test_the_documented_example_is_a_schedule() -> None:
    doc = (Path(__file__).parents[4] / "docs" / "scenarios.md").read_text(encoding="utf-8")
    example = doc.split("```json\n", 1)[1].split("```", 1)[0]
    schedule = Schedule.from_json(json.loads(example))
    assert [s.trigger is not None for s in schedule.steps] == [False, False, True]
