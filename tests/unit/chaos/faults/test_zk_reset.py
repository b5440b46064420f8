"""`zk-reset` against a scripted network namespace: it closes each of the target's
ZooKeeper connections (and nothing else), proves they are gone, resets the connection a
target makes after the start when it had none then, and has nothing to undo."""

from __future__ import annotations

from typing import Any

import pytest

from chaos.faults import zk_reset
from chaos.faults.testing import FakeCluster
from chaos.faults.zk_reset import ZkReset


def _line(local_port: int, peer: str, port: int = 2181) -> str:
    return (
        f"0 0 10.0.0.9:{local_port} {peer}:{port}\n"
        "\t bytes_sent:100 bytes_received:90 lastsnd:10 lastrcv:10\n"
    )


class ScriptedNetns:
    """The target's connections: `open` until `kill_connections` closes them; `again`
    is what is open after a reset (the client's new connection)."""

    def __init__(self, open_now: list[tuple[int, str, int]], again: list[tuple[int, str, int]]):
        self.open = list(open_now)
        self.again = again
        self.killed: list[tuple[str, int, int | None]] = []

    def established(self, port: int) -> str:
        return "".join(_line(local, ip, p) for local, ip, p in self.open if p == port)

    def kill_connections(self, ip: str, port: int, local_port: int | None = None) -> None:
        self.killed.append((ip, port, local_port))
        self.open = [c for c in self.open if (c[1], c[2], c[0]) != (ip, port, local_port)]
        if not self.open:
            self.open = list(self.again)


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster()


def _patch(monkeypatch: pytest.MonkeyPatch, netns: ScriptedNetns) -> None:
    def running(cluster: Any, service: str) -> ScriptedNetns:
        return netns

    monkeypatch.setattr(zk_reset, "running_netns", running)


def test_each_zookeeper_connection_is_closed_and_proved_gone(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    zk1, zk2 = cluster.ip("zk1"), cluster.ip("zk2")
    netns = ScriptedNetns(
        [(40000, zk1, 2181), (40001, zk2, 2181), (40002, "10.9.9.9", 2181)],
        again=[(40100, zk2, 2181)],
    )
    _patch(monkeypatch, netns)
    fault = ZkReset(("broker2",))
    fault.start(cluster)
    # only connections to the ensemble's servers are closed
    assert netns.killed == [(zk1, 2181, 40000), (zk2, 2181, 40001)]
    check = fault.took_effect(cluster)
    assert check.ok, check.detail
    assert f"{zk1}:2181 from :40000" in check.detail
    assert fault.undone(cluster).ok


def test_a_connection_still_open_fails_the_check(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    zk1 = cluster.ip("zk1")
    netns = ScriptedNetns([(40000, zk1, 2181)], again=[])
    _patch(monkeypatch, netns)
    fault = ZkReset(("broker2",))
    fault.start(cluster)
    netns.open = [(40000, zk1, 2181)]  # the kernel refused to close it
    check = fault.took_effect(cluster)
    assert not check.ok
    assert "still open" in check.detail


def test_nothing_to_reset_yet_is_no_effect_yet(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    _patch(monkeypatch, ScriptedNetns([], again=[]))
    fault = ZkReset(("broker2",))
    fault.start(cluster)
    check = fault.took_effect(cluster)
    assert not check.ok
    assert "no ZooKeeper connection to reset" in check.detail


def test_a_connection_made_after_the_start_is_reset_by_the_check_and_proved_gone(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a blind hunt's run: the controller was between connections when the reset started,
    # and the check waited out its 30 s on a fault that could never take effect
    zk1 = cluster.ip("zk1")
    netns = ScriptedNetns([], again=[(40200, zk1, 2181)])
    _patch(monkeypatch, netns)
    fault = ZkReset(("broker2",))
    fault.start(cluster)
    assert netns.killed == []
    netns.open = [(40100, zk1, 2181)]  # the client's connection, made meanwhile
    first = fault.took_effect(cluster)
    assert not first.ok
    assert "reset now" in first.detail
    assert netns.killed == [(zk1, 2181, 40100)]
    second = fault.took_effect(cluster)
    assert second.ok, second.detail
    assert f"{zk1}:2181 from :40100 reset" in second.detail


def test_a_server_another_fault_stopped_is_not_looked_up(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a blind hunt's run: zk1 stopped by another fault, the broker connected to zk2
    zk2 = cluster.ip("zk2")
    cluster.stop("zk1", 10)
    netns = ScriptedNetns([(40001, zk2, 2181)], again=[(40100, cluster.ip("zk3"), 2181)])
    _patch(monkeypatch, netns)
    fault = ZkReset(("broker2",))
    fault.start(cluster)
    assert netns.killed == [(zk2, 2181, 40001)]
    check = fault.took_effect(cluster)
    assert check.ok, check.detail
