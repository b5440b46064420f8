"""The rolling restarts of a CA rotation (`security.rolling.rotate`) on a fake cluster:
which server restarts when, with which files in place, and what a server that does not
come back does. Files only in pytest's directory; time is faked."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from security.rolling import RestartTimes, RotationError, rotate
from security.rotation import Phase
from security.rotation_files import phase_in_place
from security.tls import ensure_tls
from security.tls_files import TlsFiles


@dataclass
class FakeCluster:
    """Three ZooKeeper servers and three brokers; records each restart with the phase
    whose files were in place. `stuck` never serves again once restarted."""

    files: TlsFiles
    leader: str = "zk2"
    controller_of: str = "broker1"
    stuck: str | None = None
    restarts: list[tuple[str, str]] = field(default_factory=list)
    down: set[str] = field(default_factory=set)

    def zookeepers(self) -> tuple[str, ...]:
        return ("zk1", "zk2", "zk3")

    def brokers(self) -> tuple[str, ...]:
        return ("broker1", "broker2", "broker3")

    def zk_leader(self) -> str | None:
        return self.leader

    def controller(self) -> str | None:
        return self.controller_of

    def restart(self, service: str) -> None:
        phase = phase_in_place(self.files)
        self.restarts.append((phase.value if phase else "-", service))
        if service == self.stuck:
            self.down.add(service)

    def not_serving(self, service: str) -> str | None:
        return "health check starting" if service in self.down else None


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def files(tmp_path: Path) -> TlsFiles:
    return ensure_tls(tmp_path).files


def _rotate(files: TlsFiles, cluster: FakeCluster, said: list[str]) -> None:
    clock = FakeClock()
    rotate(
        files.directory,
        cluster,
        said.append,
        RestartTimes(serve_s=10, poll_s=1),
        sleep=clock.sleep,
        monotonic=clock.monotonic,
    )


def test_each_pass_restarts_every_server_once_leader_and_controller_last(
    files: TlsFiles,
) -> None:
    cluster = FakeCluster(files)
    said: list[str] = []
    _rotate(files, cluster, said)
    one_pass = ["zk1", "zk3", "zk2", "broker2", "broker3", "broker1"]
    assert cluster.restarts == [(phase.value, service) for phase in Phase for service in one_pass]
    assert sum("serving again" in line for line in said) == 18
    assert said[-1].startswith("rotated:")
    assert phase_in_place(files) is None


def test_a_server_that_does_not_come_back_stops_the_rotation_in_its_phase(
    files: TlsFiles,
) -> None:
    cluster = FakeCluster(files, stuck="zk3")
    with pytest.raises(RotationError, match=r"trust-both: restart zk3: not serving after 10s"):
        _rotate(files, cluster, [])
    assert cluster.restarts == [("trust-both", "zk1"), ("trust-both", "zk3")]
    assert phase_in_place(files) is Phase.TRUST_BOTH


def test_a_stopped_rotation_resumes_with_the_pass_it_stopped_in(files: TlsFiles) -> None:
    stuck = FakeCluster(files, stuck="broker2")
    with pytest.raises(RotationError):
        _rotate(files, stuck, [])
    assert phase_in_place(files) is Phase.TRUST_BOTH
    cluster = FakeCluster(files)
    said: list[str] = []
    _rotate(files, cluster, said)
    assert said[0] == f"resuming the rotation in {files.directory} at trust-both"
    assert [phase for phase, _ in cluster.restarts] == (
        ["trust-both"] * 6 + ["new-leaves"] * 6 + ["retire-old"] * 6
    )
    assert phase_in_place(files) is None


def test_nothing_changes_while_a_server_does_not_serve(files: TlsFiles) -> None:
    cluster = FakeCluster(files)
    cluster.down.add("broker3")
    ca = files.cert("ca").read_bytes()
    with pytest.raises(RotationError, match="not rotating: broker3 does not serve"):
        _rotate(files, cluster, [])
    assert cluster.restarts == []
    assert files.cert("ca").read_bytes() == ca
    assert phase_in_place(files) is None
