"""The `cert-rotation` fault as data and its checks that need no server: how a schedule
names it, its rebuild from its description, and an undo that is refused while a rotation
is under way or the host trusts two CAs. The rotation itself runs on compose
(tests/docker/test_compose_cert_rotation.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chaos.errors import FaultFailed, UnknownRole
from chaos.faults.cert_rotation import CertRotation, rolling_view
from chaos.faults.registry import fault_from_json
from chaos.faults.testing import FakeCluster
from chaos.generator.random_mix import MIX_KINDS
from chaos.generator.schedule import FaultSpec, Step
from security.rotation import Phase
from security.rotation_files import write_phase
from security.tls import ensure_tls

EVERY = ("broker1", "broker2", "broker3", "zk1", "zk2", "zk3")


def test_a_schedule_names_it_on_every_service_as_an_instant_step() -> None:
    spec = FaultSpec("cert-rotation", "all")
    assert Step(10, 0, spec).duration_s == 0
    with pytest.raises(UnknownRole, match="all only"):
        FaultSpec("cert-rotation", "controller")
    assert spec.fault(EVERY) == CertRotation(EVERY)


def test_it_rebuilds_from_its_description() -> None:
    fault = CertRotation(EVERY)
    rebuilt = fault_from_json("cert-rotation", json.loads(json.dumps(fault.describe())))
    assert rebuilt == fault


def test_the_random_mix_never_draws_it() -> None:
    assert "cert-rotation" not in MIX_KINDS


def test_a_plaintext_cluster_has_nothing_to_rotate() -> None:
    with pytest.raises(FaultFailed, match="plaintext"):
        CertRotation(EVERY).start(FakeCluster())


def test_it_is_not_undone_while_a_rotation_is_under_way(tmp_path: Path) -> None:
    cluster = FakeCluster()
    cluster.tls = ensure_tls(tmp_path).files.directory
    write_phase(ensure_tls(tmp_path).files, Phase.TRUST_BOTH)
    check = CertRotation(EVERY).undone(cluster)
    assert not check.ok
    assert "under way" in check.detail


def test_its_effect_needs_the_ca_seen_before(tmp_path: Path) -> None:
    cluster = FakeCluster()
    cluster.tls = ensure_tls(tmp_path).files.directory
    check = CertRotation(EVERY).took_effect(cluster)
    assert not check.ok
    assert "unknown" in check.detail


def test_the_rolling_view_puts_the_leader_and_the_controller_last() -> None:
    cluster = FakeCluster()
    cluster.controller = 2
    view = rolling_view(cluster, EVERY, Path("unused"))
    assert view.zookeepers() == ("zk1", "zk2", "zk3")
    assert view.brokers() == ("broker1", "broker2", "broker3")
    assert view.zk_leader() == "zk1"
    assert view.controller() == "broker2"
    cluster.state["zk2"] = "exited"
    assert view.not_serving("zk2") == "container exited"
