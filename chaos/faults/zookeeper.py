"""Faults on the ZooKeeper ensemble: `ZkLeaderKill` (SIGKILL the server that leads, so the
ensemble elects another) and `ZkPause` (freeze one server, a minority).

A fault's targets are resolved before it is built; `ZkLeaderKill.of_current_leader` builds
one for whichever server leads at that moment, and `start` refuses a target that no
longer leads rather than kill a follower under the leader kill's name. The ensemble is
the project's services named `zk<n>`. Runs on the injector's thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from chaos.errors import FaultFailed
from chaos.faults.base import Check, FaultTarget
from chaos.faults.fields import BadFaultData, check_targets
from chaos.faults.process import RUNNING, Pause, ProcessDown, not_running, running

LEADER = "leader"


def ensemble(cluster: FaultTarget) -> tuple[str, ...]:
    """The project's ZooKeeper servers (services named `zk<n>`), sorted."""
    return tuple(s for s in cluster.services() if s.startswith("zk") and s[2:].isdigit())


def ensemble_leader(cluster: FaultTarget) -> str:
    """The server that leads the ensemble now (`FaultFailed` when none does)."""
    modes = {server: cluster.zk_mode(server) for server in ensemble(cluster)}
    leaders = [server for server, mode in modes.items() if mode == LEADER]
    if not leaders:
        raise FaultFailed(f"no ZooKeeper server leads now: {modes}")
    return leaders[0]


def _one_server(targets: tuple[str, ...], kind: str) -> None:
    check_targets(targets, kind)
    if len(targets) != 1 or not targets[0].startswith("zk"):
        raise BadFaultData(f"{kind}: needs exactly one ZooKeeper server, got {targets!r}")


@dataclass(frozen=True, slots=True)
class ZkLeaderKill(ProcessDown):
    """SIGKILL the ensemble's leader; took effect when it is gone and another server
    leads; undone by starting it (`ProcessDown.stop`), and when it serves again."""

    KIND: ClassVar[str] = "zk-leader-kill"

    def __post_init__(self) -> None:
        _one_server(self.targets, self.KIND)

    @classmethod
    def of_current_leader(cls, cluster: FaultTarget) -> ZkLeaderKill:
        """The fault for whichever server leads now (`FaultFailed` when none does)."""
        return cls((ensemble_leader(cluster),))

    def start(self, cluster: FaultTarget) -> None:
        """Kill the target if it runs and still leads; a target that runs as a follower
        is refused (`FaultFailed`), one already down is left down."""
        (server,) = self.targets
        if cluster.status(server) != RUNNING:
            return
        mode = cluster.zk_mode(server)
        if mode != LEADER:
            raise FaultFailed(f"{server} no longer leads the ensemble (it is {mode})")
        cluster.kill(server)

    def took_effect(self, cluster: FaultTarget) -> Check:
        """The old leader does not run and another server reports `leader`."""
        (server,) = self.targets
        gone = not_running(cluster, self.targets)
        others = {s: cluster.zk_mode(s) for s in ensemble(cluster) if s != server}
        elected = [s for s, mode in others.items() if mode == LEADER]
        modes = ", ".join(f"{s} {mode}" for s, mode in others.items())
        return Check.all([gone, Check(bool(elected), modes or "no other server")])

    def undone(self, cluster: FaultTarget) -> Check:
        """The old leader runs and serves again (as leader or follower)."""
        (server,) = self.targets
        up = running(cluster, self.targets)
        mode = cluster.zk_mode(server) if up.ok else "not running"
        serving = mode in (LEADER, "follower")
        return Check.all([up, Check(serving, f"{server} mode {mode}")])


@dataclass(frozen=True, slots=True)
class ZkPause(Pause):
    """Freeze one ZooKeeper server (a minority: the ensemble keeps its quorum); measured
    and undone as `Pause`."""

    KIND: ClassVar[str] = "zk-pause"

    def __post_init__(self) -> None:
        _one_server(self.targets, self.KIND)
