"""The fault registry: every kind rebuilds from its own description (through JSON) to an
equal fault, a step's spec builds the fault its params say, and bad descriptions are
refused with errors that say what is wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chaos.cluster.roles import RoleClass
from chaos.errors import FaultError
from chaos.faults.base import Fault
from chaos.faults.fields import BadFaultData
from chaos.faults.process import Bounce, Kill, Pause, Stop
from chaos.faults.registry import FAULT_TYPES, fault_from_json
from chaos.faults.zookeeper import ZkLeaderKill, ZkPause
from chaos.generator.schedule import FaultSpec, Step

EXAMPLES: list[Fault] = [
    Kill(("broker1", "broker2")),
    Stop(("broker3",), timeout_s=12.5),
    Pause(("zk2",)),
    Bounce(("broker2",)),
    ZkLeaderKill(("zk1",)),
    ZkPause(("zk3",)),
]


@pytest.mark.parametrize("fault", EXAMPLES, ids=lambda f: f.kind)
def test_every_kind_survives_a_json_round_trip(fault: Fault) -> None:
    data = json.loads(json.dumps(fault.describe()))
    rebuilt = fault_from_json(fault.kind, data)
    assert rebuilt == fault
    assert type(rebuilt) is type(fault)
    assert rebuilt.targets == fault.targets


def test_the_registry_holds_the_process_and_zookeeper_kinds() -> None:
    assert {f.kind for f in EXAMPLES} < set(FAULT_TYPES)


def test_a_pause_and_a_zk_pause_of_the_same_server_differ() -> None:
    assert Pause(("zk1",)) != ZkPause(("zk1",))


def test_an_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(BadFaultData, match=r"'teleport'.*kill, stop, pause"):
        fault_from_json("teleport", {"targets": ["broker1"]})


@pytest.mark.parametrize(
    ("kind", "data", "message"),
    [
        ("kill", {}, "`targets` must be a non-empty list"),
        ("kill", {"targets": []}, "`targets` must be a non-empty list"),
        ("kill", {"targets": "broker1"}, "`targets` must be a non-empty list"),
        ("kill", {"targets": ["broker1", 3]}, "every target must be a service name"),
        ("kill", {"targets": ["broker1"], "signal": "HUP"}, r"unknown fields \['signal'\]"),
        ("stop", {"targets": ["broker1"], "timeout_s": "soon"}, "must be a number"),
        ("stop", {"targets": ["broker1"], "timeout_s": 0}, "must be a positive number"),
        ("stop", {"targets": ["broker1"], "timeout_s": True}, "must be a number"),
        ("zk-pause", {"targets": ["zk1", "zk2"]}, "exactly one ZooKeeper server"),
        ("zk-leader-kill", {"targets": ["broker1"]}, "exactly one ZooKeeper server"),
        ("pause", ["broker1"], "must be a JSON object"),
    ],
)
def test_bad_descriptions_are_refused(kind: str, data: Any, message: str) -> None:
    with pytest.raises(BadFaultData, match=message):
        fault_from_json(kind, data)


def test_a_fault_value_checks_its_own_targets() -> None:
    with pytest.raises(BadFaultData, match="non-empty tuple"):
        Kill(())
    with pytest.raises(BadFaultData, match="non-empty tuple"):
        Kill(["broker1"])  # type: ignore[arg-type]


def _role_for(kind: str) -> str:
    fault_type = FAULT_TYPES[kind]
    if fault_type.only_role is not None:
        return fault_type.only_role
    return "broker:1" if RoleClass.BROKERS in fault_type.targets else "zk:1"


@pytest.mark.parametrize("kind", sorted(FAULT_TYPES))
def test_a_spec_builds_the_fault_its_description_rebuilds(kind: str) -> None:
    role = _role_for(kind)
    services: tuple[str, ...] = ("zk1",) if role.startswith("zk") else ("broker1",)
    if kind == "partition":
        services = ("broker1", "broker2", "broker3")
    duration = {True: 1.0, False: 0.0, None: 0.0}[FAULT_TYPES[kind].lasts]
    step = Step(0.0, duration, FaultSpec(kind, role))
    fault = step.fault.fault(services)
    assert fault.kind == kind
    assert fault.targets == services
    assert fault_from_json(kind, json.loads(json.dumps(fault.describe()))) == fault


def test_a_spec_carries_its_params_into_the_fault() -> None:
    fault = FaultSpec.of("stop", "controller", {"timeout_s": 7}).fault(("broker2",))
    assert fault == Stop(("broker2",), timeout_s=7.0)


@pytest.mark.parametrize(
    ("kind", "params", "message"),
    [("latency", {"delay_ms": 20000}, "delay_ms"), ("bandwidth", {"rate_kbit": 4}, "rate_kbit")],
)
def test_params_a_fault_refuses_are_a_fault_error_not_a_crash(
    kind: str, params: dict[str, int], message: str
) -> None:
    spec = FaultSpec.of(kind, "controller", params)
    with pytest.raises(FaultError, match=message):
        spec.fault(("broker1",))
