"""`disk-volatile` and `power-loss` as values over fake layers: the journal is armed and
cleared, a power loss kills every target before any layer loses its writes and starts
them again after, refuses to start on layers that keep no journal, and is undone (also by
a heal that rebuilds it from its description) once the brokers run, are registered, and
no layer holds a rule."""

from __future__ import annotations

import json

import pytest

from chaos.errors import FaultFailed
from chaos.faults import disk, power
from chaos.faults.power import DiskVolatile, PowerLoss
from chaos.faults.process import RUNNING
from chaos.faults.registry import FAULT_TYPES, fault_from_json
from chaos.faults.testing import FakeCluster
from harness.disk_layers import LayerStats
from harness.disk_rules import LayerCounters, LayerRules

TARGETS = ("broker1", "broker2")


class FakeLayer:
    """A layer's control socket; `lose` records the target's state when it came."""

    def __init__(self, cluster: FakeCluster, target: str, lost: tuple[int, int]) -> None:
        self.rules = LayerRules()
        self.counters = LayerCounters()
        self.cluster, self.target, self.lost = cluster, target, lost
        self.lost_while: list[str] = []

    def stats(self) -> LayerStats:
        return LayerStats(1, self.rules, self.counters)

    def set(self, rules: LayerRules) -> LayerStats:
        before = self.stats()
        self.rules, self.counters = rules, LayerCounters()
        return before

    def reset(self) -> LayerStats:
        return self.set(LayerRules())

    def lose(self) -> LayerStats:
        self.lost_while.append(self.cluster.status(self.target))
        return LayerStats(1, self.rules, self.counters, self.lost)


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> FakeCluster:
    """Three brokers; a killed one's registration goes with it (its session expires)."""
    fake = FakeCluster()
    kill = fake.kill

    def killed(service: str, signal: str = "SIGKILL") -> None:
        kill(service, signal)
        fake.registered.discard(int(service.removeprefix("broker")))

    monkeypatch.setattr(fake, "kill", killed)
    return fake


@pytest.fixture
def layers(monkeypatch: pytest.MonkeyPatch, cluster: FakeCluster) -> dict[str, FakeLayer]:
    found = {f"broker{i}": FakeLayer(cluster, f"broker{i}", (i, 100 * i)) for i in (1, 2, 3)}
    monkeypatch.setattr(disk, "_control", lambda cluster, target: found[target])
    table = "".join(
        f"9{i} 1 0:9{i} / /var/lib/testbed/data rw - fuse.testbed-disk "
        f"testbed-disk:{cluster.project}/broker{i} rw\n"
        for i in (1, 2, 3)
    )
    monkeypatch.setattr(disk, "mount_table", lambda pid: table)
    return found


def test_disk_volatile_arms_the_journal_and_its_undo_clears_it(
    cluster: FakeCluster, layers: dict[str, FakeLayer]
) -> None:
    fault = DiskVolatile(TARGETS)
    fault.start(cluster)
    assert layers["broker1"].rules == LayerRules(lose_unsynced=True)
    layers["broker1"].counters.seen["write"] = 3
    effect = fault.took_effect(cluster)
    assert effect.ok
    assert "broker1 (running): layer journals unsynced writes, 3 writes" in effect.detail
    layers["broker2"].rules = LayerRules()
    assert not fault.took_effect(cluster).ok
    fault.stop(cluster)
    assert all(layer.rules.transparent for layer in layers.values())
    assert fault.undone(cluster).ok


def test_a_power_loss_loses_the_writes_of_killed_brokers_and_starts_them(
    cluster: FakeCluster, layers: dict[str, FakeLayer]
) -> None:
    DiskVolatile(TARGETS).start(cluster)
    fault = PowerLoss(TARGETS)
    assert not fault.took_effect(cluster).ok
    fault.start(cluster)
    assert layers["broker1"].lost_while == ["exited"]
    assert layers["broker2"].lost_while == ["exited"]
    assert layers["broker3"].lost_while == []
    assert [cluster.status(t) for t in TARGETS] == [RUNNING, RUNNING]
    assert cluster.registered == {3}, "started before the old sessions were gone"
    effect = fault.took_effect(cluster)
    assert effect.ok
    assert "took back 200 bytes of 2 files" in effect.detail
    cluster.registered |= {1, 2}  # registered again
    assert not fault.undone(cluster).ok  # the layers still journal
    fault.stop(cluster)
    assert fault.undone(cluster).ok


def test_a_power_loss_refuses_layers_without_a_journal(
    cluster: FakeCluster, layers: dict[str, FakeLayer]
) -> None:
    with pytest.raises(FaultFailed, match="disk-volatile"):
        PowerLoss(TARGETS).start(cluster)
    assert cluster.status("broker1") == RUNNING


def test_a_heal_rebuilds_it_and_starts_the_brokers_left_down(
    cluster: FakeCluster, layers: dict[str, FakeLayer]
) -> None:
    DiskVolatile(TARGETS).start(cluster)
    for target in TARGETS:
        cluster.kill(target)  # the runner died between the kill and the start
    fault = PowerLoss(TARGETS)
    rebuilt = fault_from_json("power-loss", json.loads(json.dumps(fault.describe())))
    assert rebuilt == fault
    rebuilt.stop(cluster)
    assert not rebuilt.undone(cluster).ok  # not registered yet
    cluster.registered |= {1, 2}
    assert rebuilt.undone(cluster).ok


def test_an_unregistered_broker_is_not_undone(
    cluster: FakeCluster, layers: dict[str, FakeLayer]
) -> None:
    cluster.registered.discard(2)
    check = PowerLoss(TARGETS).undone(cluster)
    assert not check.ok
    assert "broker2 running, not registered" in check.detail


def test_both_kinds_are_in_the_registry() -> None:
    assert FAULT_TYPES["power-loss"].lasts is False
    assert FAULT_TYPES["disk-volatile"].lasts is True
    assert FAULT_TYPES["power-loss"].build(TARGETS, {}) == PowerLoss(TARGETS)


def test_a_power_loss_fails_when_a_registration_outlives_the_wait(
    cluster: FakeCluster, layers: dict[str, FakeLayer], monkeypatch: pytest.MonkeyPatch
) -> None:
    DiskVolatile(TARGETS).start(cluster)
    monkeypatch.setattr(power, "SESSION_WAIT_S", 0.2)
    monkeypatch.setattr(
        cluster, "kill", lambda service, signal="SIGKILL": cluster.state.update({service: "exited"})
    )
    with pytest.raises(FaultFailed, match="still registered"):
        PowerLoss(TARGETS).start(cluster)
    assert layers["broker1"].lost_while == []
