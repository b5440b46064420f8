"""Schedules as values: fault specs fill in and check their params, roles and kinds are
checked, steps must be sorted and end before the heal, and the heal before the end. Every
bad value gets a `ScheduleError` naming what is wrong."""

from __future__ import annotations

import re

import pytest

from chaos.cluster.roles import ROLE_NAMES, RoleClass, parse_role
from chaos.errors import BadParams, BadTiming, ScheduleError, UnknownKind, UnknownRole
from chaos.faults.registry import FAULT_TYPES
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step


def _kill(at_s: float, duration_s: float = 10.0, target: str = "controller") -> Step:
    return Step(at_s, duration_s, FaultSpec("kill", target))


def test_params_are_filled_with_defaults_sorted_and_hashable() -> None:
    spec = FaultSpec.of("stop", "broker:2")
    assert spec.params == (("timeout_s", 30),)
    assert FaultSpec("loss", "busiest-leader", {"percent": 5}).params == (("percent", 5),)  # type: ignore[arg-type]
    assert hash(spec) == hash(FaultSpec.of("stop", "broker:2", {"timeout_s": 30}))
    assert FaultSpec.of("latency", "all-brokers").param("delay_ms") == 100


def test_describe_names_kind_target_and_params() -> None:
    step = Step(12, 3, FaultSpec.of("loss", "controller", {"percent": 30}))
    assert step.describe() == "12.0s +3.0s loss controller percent=30"


@pytest.mark.parametrize(
    ("kind", "target", "params", "error", "words"),
    [
        ("nuke", "controller", {}, UnknownKind, "unknown fault kind 'nuke'"),
        ("kill", "the-controller", {}, UnknownRole, "unknown role 'the-controller'"),
        ("bounce", "zk-leader", {}, UnknownRole, "bounce acts on brokers"),
        ("zk-pause", "controller", {}, UnknownRole, "zk-pause acts on zookeeper"),
        ("zk-leader-kill", "zk:1", {}, UnknownRole, "zk-leader-kill acts on zk-leader only"),
        ("zk-pause", "all", {}, UnknownRole, "zk-pause acts on zookeeper, not on role 'all'"),
        ("kill", "leader:bad topic:0", {}, UnknownRole, "illegal"),
        ("kill", "controller", {"timeout_s": 3}, BadParams, "does not take timeout_s"),
        ("loss", "controller", {"percent": 120}, BadParams, "percent must be in (0, 100]"),
        ("loss", "controller", {"percent": True}, BadParams, "percent must be"),
        ("latency", "controller", {"delay_ms": 1.5}, BadParams, "delay_ms must be an integer"),
        ("partition", "all", {"grudge": "thirds"}, BadParams, "grudge must be halves|"),
    ],
)
def test_bad_fault_specs_are_refused_with_a_clear_error(
    kind: str, target: str, params: dict[str, object], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=re.escape(words)):
        FaultSpec(kind, target, params)  # type: ignore[arg-type]


def test_every_kind_accepts_some_role() -> None:
    for kind in FAULT_TYPES.values():
        assert any(c in kind.targets for c in RoleClass), kind.name


@pytest.mark.parametrize(
    ("text", "role_class", "group"),
    [
        ("controller", RoleClass.BROKERS, False),
        ("broker:3", RoleClass.BROKERS, False),
        ("leader:chaos-topic:11", RoleClass.BROKERS, False),
        ("all-brokers", RoleClass.BROKERS, True),
        ("zk:2", RoleClass.ZOOKEEPER, False),
        ("zk-follower", RoleClass.ZOOKEEPER, False),
        ("zk-followers", RoleClass.ZOOKEEPER, True),
        ("all", RoleClass.ANY, True),
    ],
)
def test_roles_parse_to_their_class(text: str, role_class: RoleClass, group: bool) -> None:
    role = parse_role(text)
    assert (role.role_class, role.group) == (role_class, group)


@pytest.mark.parametrize("text", ["broker:", "broker:x", "zk:0", "leader:t", "leader:t:-1", "", 3])
def test_malformed_roles_are_unknown(text: object) -> None:
    with pytest.raises(UnknownRole):
        parse_role(text)


def test_role_names_are_listed_for_messages() -> None:
    assert "busiest-leader" in ROLE_NAMES
    assert "leader:<topic>:<partition>" in ROLE_NAMES


def test_instant_and_lasting_kinds_check_the_duration() -> None:
    assert Step(5, 0, FaultSpec("bounce", "controller")).ends_s == 5.0
    with pytest.raises(BadTiming, match="bounce is instant"):
        Step(5, 1, FaultSpec("bounce", "controller"))
    with pytest.raises(BadTiming, match="kill lasts"):
        _kill(5, 0)
    assert Step(5, 0, FaultSpec("session-expire", "broker:1")).duration_s == 0
    assert Step(5, 8, FaultSpec("session-expire", "broker:1")).duration_s == 8


@pytest.mark.parametrize(("at_s", "duration_s"), [(-1, 5), (1, -5), (float("nan"), 1), ("3", 1)])
def test_step_times_must_be_non_negative_numbers(at_s: object, duration_s: object) -> None:
    with pytest.raises(BadTiming):
        Step(at_s, duration_s, FaultSpec("kill", "controller"))  # type: ignore[arg-type]


def test_a_valid_schedule_answers_questions_about_its_timeline() -> None:
    schedule = Schedule(1, (_kill(5), _kill(10, 20, "broker:2")), heal_at_s=40, end_s=60)
    assert schedule.last_fault_end_s == 30.0
    assert [s.fault.target for s in schedule.active_at(12)] == ["controller", "broker:2"]
    assert schedule.active_at(35) == ()
    assert schedule.describe().splitlines()[-2:] == ["40.0s heal", "60.0s end"]


@pytest.mark.parametrize(
    ("steps", "heal", "end", "words"),
    [
        ((_kill(10), _kill(5)), 40, 60, "step 1 starts before step 0"),
        ((_kill(10, 35),), 40, 60, "step 0 .* ends after heal_at_s"),
        ((_kill(10),), 60, 60, "heal_at_s .* must come before end_s"),
        ((_kill(10),), -1, 60, "heal_at_s must not be negative"),
    ],
)
def test_bad_timings_are_refused(
    steps: tuple[Step, ...], heal: float, end: float, words: str
) -> None:
    with pytest.raises(BadTiming, match=words):
        Schedule(None, steps, heal, end)


def test_actions_are_checked_and_must_come_before_the_heal() -> None:
    action = Action(20, "reassign", (("topic", "t"),))
    assert action.params == (("shift", 1), ("topic", "t"))
    assert Schedule(3, (), 30, 50, (action,)).actions == (action,)
    with pytest.raises(BadTiming, match=r"action 0 .* after heal_at_s"):
        Schedule(3, (), 10, 50, (action,))
    with pytest.raises(BadParams, match="needs the param topic"):
        Action(20, "reassign")
    with pytest.raises(UnknownKind, match="actions are reassign"):
        Action(20, "compact")


@pytest.mark.parametrize("seed", [True, 1.5, "7"])
def test_a_seed_is_an_integer_or_none(seed: object) -> None:
    with pytest.raises(ScheduleError, match="seed must be an integer"):
        Schedule(seed, (), 10, 20)  # type: ignore[arg-type]
