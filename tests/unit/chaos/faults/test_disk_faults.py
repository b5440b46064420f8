"""The disk faults as values: the rules each puts in its targets' layers, params checked
against their ranges, a description that rebuilds an equal fault, a start refused where
the target's log directory is not behind a layer, and an undo that clears the rules and
restarts only a broker whose layer failed an operation. The layer is a fake control."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chaos.errors import BadParams, FaultFailed
from chaos.faults import disk
from chaos.faults.disk import DiskEio, DiskFull, DiskSlow
from chaos.faults.fields import BadFaultData
from chaos.faults.params import normalize_params
from chaos.faults.registry import FAULT_TYPES, fault_from_json
from chaos.faults.testing import FakeCluster
from chaos.generator.random_mix import MIX_KINDS, random_mix
from harness.disk_layers import DiskLayerError, LayerStats
from harness.disk_rules import ErrorRule, LatencyRule, LayerCounters, LayerRules

DISK_KINDS = ("disk-eio", "disk-slow", "disk-full")


class FakeLayer:
    """A layer's control socket: the rules set and the counters it reports."""

    def __init__(self, counters: LayerCounters | None = None, answers: bool = True) -> None:
        self.rules = LayerRules()
        self.counters = counters or LayerCounters()
        self.answers = answers

    def _stats(self) -> LayerStats:
        if not self.answers:
            raise DiskLayerError("no layer")
        return LayerStats(1, self.rules, self.counters)

    def stats(self) -> LayerStats:
        return self._stats()

    def set(self, rules: LayerRules) -> LayerStats:
        before = self._stats()
        self.rules, self.counters = rules, LayerCounters()
        return before

    def reset(self) -> LayerStats:
        return self.set(LayerRules())


@pytest.fixture
def layers(monkeypatch: pytest.MonkeyPatch) -> dict[str, FakeLayer]:
    """One fake layer per broker of a `FakeCluster`, each mounted in its broker."""
    found = {f"broker{i}": FakeLayer() for i in (1, 2, 3)}
    monkeypatch.setattr(disk, "_control", lambda cluster, target: found[target])
    table = "".join(
        f"9{i} 1 0:9{i} / /var/lib/testbed/data rw - fuse.testbed-disk "
        f"testbed-disk:fake/broker{i} rw\n"
        for i in (1, 2, 3)
    )
    monkeypatch.setattr(disk, "mount_table", lambda pid: table)
    return found


def test_each_kind_puts_its_rules_in_the_layer() -> None:
    assert DiskEio(("broker1",), "fsync", "*.log", 0.5).rules() == LayerRules(
        errors=(ErrorRule("fsync", "*.log", "EIO", 0.5),)
    )
    assert DiskSlow(("broker1",), "any", 40).rules() == LayerRules(
        latency=(LatencyRule("any", 40),)
    )
    assert DiskFull(("broker1",), 4096).rules() == LayerRules(budget_bytes=4096)


@pytest.mark.parametrize("kind", DISK_KINDS)
def test_a_step_with_the_defaults_rebuilds_from_its_description(kind: str) -> None:
    found = FAULT_TYPES[kind]
    params = dict(normalize_params(kind, found.params, {}))
    fault = found.build(("broker2",), params)
    assert fault.kind == kind
    assert fault_from_json(kind, json.loads(json.dumps(fault.describe()))) == fault


@pytest.mark.parametrize(
    ("kind", "params", "message"),
    [
        ("disk-eio", {"op": "open"}, "op must be"),
        ("disk-eio", {"probability": 0}, "probability"),
        ("disk-eio", {"glob": ""}, "glob"),
        ("disk-slow", {"delay_ms": 20_000}, "delay_ms"),
        ("disk-slow", {"op": "flush"}, "op must be"),
        ("disk-full", {"budget_bytes": -1}, "budget_bytes"),
        ("disk-full", {"budget_bytes": True}, "budget_bytes"),
    ],
)
def test_params_out_of_range_are_refused(kind: str, params: dict[str, Any], message: str) -> None:
    with pytest.raises(BadParams, match=message):
        normalize_params(kind, FAULT_TYPES[kind].params, params)


@pytest.mark.parametrize(
    ("kind", "data", "message"),
    [
        ("disk-eio", {"targets": ["broker1"], "errno": "EIO"}, "unknown fields"),
        ("disk-eio", {"targets": ["broker1"], "probability": 2}, "probability"),
        ("disk-slow", {"targets": []}, "targets"),
        ("disk-full", {"targets": ["broker1"], "budget_bytes": "lots"}, "budget_bytes"),
    ],
)
def test_bad_descriptions_are_refused(kind: str, data: dict[str, Any], message: str) -> None:
    with pytest.raises(BadFaultData, match=message):
        fault_from_json(kind, data)


def test_a_value_out_of_range_is_refused_by_the_value_itself() -> None:
    with pytest.raises(BadFaultData, match="latency rule"):
        DiskSlow(("broker1",), "any", 0)


def test_start_is_refused_where_the_log_dir_is_not_behind_a_layer(
    layers: dict[str, FakeLayer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(disk, "mount_table", lambda pid: "22 1 8:1 / / rw - ext4 /dev/vda1 rw\n")
    with pytest.raises(FaultFailed, match="not behind a disk layer"):
        DiskEio(("broker1",)).start(FakeCluster())
    assert layers["broker1"].rules.transparent


def test_eio_takes_effect_once_its_layer_failed_an_operation(
    layers: dict[str, FakeLayer],
) -> None:
    cluster = FakeCluster()
    fault = DiskEio(("broker1",), "write")
    fault.start(cluster)
    assert layers["broker1"].rules == fault.rules()
    assert not fault.took_effect(cluster).ok
    layers["broker1"].counters.failed["write"] = 2
    check = fault.took_effect(cluster)
    assert check.ok
    assert "failed 2" in check.detail


def test_slow_takes_effect_once_its_layer_held_an_operation(
    layers: dict[str, FakeLayer],
) -> None:
    cluster = FakeCluster()
    fault = DiskSlow(("broker2",), "fsync", 50)
    fault.start(cluster)
    layers["broker2"].counters.delayed["fsync"] = 1
    assert fault.took_effect(cluster).ok
    fault.stop(cluster)
    assert fault.undone(cluster).ok
    assert _changes(cluster) == []


def _changes(cluster: FakeCluster) -> list[tuple[str, str]]:
    """The calls that change a container."""
    return [call for call in cluster.calls if call[0] in ("stop", "start", "kill")]


def test_undo_restarts_a_broker_whose_layer_failed_and_starts_a_halted_one(
    layers: dict[str, FakeLayer],
) -> None:
    cluster = FakeCluster()
    fault = DiskEio(("broker1", "broker2", "broker3"))
    fault.start(cluster)
    layers["broker1"].counters.failed["write"] = 1  # kept running (notify)
    layers["broker2"].counters.failed["fsync"] = 1
    cluster.state["broker2"] = "exited"  # halted on the error
    fault.stop(cluster)
    assert all(layer.rules.transparent for layer in layers.values())
    assert _changes(cluster) == [
        ("stop", "broker1"),
        ("start", "broker1"),
        ("start", "broker2"),
    ]
    assert fault.undone(cluster).ok


def test_undo_of_a_fault_whose_layer_is_gone_does_nothing(
    layers: dict[str, FakeLayer],
) -> None:
    cluster = FakeCluster()
    layers["broker3"].answers = False
    fault = DiskFull(("broker3",), 0)
    fault.stop(cluster)
    assert _changes(cluster) == []
    assert fault.undone(cluster).ok


def test_the_default_mix_draws_no_disk_kind_but_one_asked_for_it_does() -> None:
    assert not set(DISK_KINDS) & set(MIX_KINDS)
    schedule = random_mix(7, 120, DISK_KINDS)
    drawn = {step.fault.kind for step in schedule.steps}
    assert drawn == set(DISK_KINDS)
