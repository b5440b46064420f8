"""A CA rotation on a running cluster: each phase's files written
(`security.rotation_files`), then every server restarted one at a time, each waited for
until it serves again with the new files, before the next (`security.rotation` says why
three passes). The cluster is reached through `RollingCluster`: docker for
`python -m security rotate` (`security.compose_rolling`), the chaos runner's handle for
the `cert-rotation` fault. Runs on the caller's thread; blocks for the whole rotation.

    RotationError   a server did not serve again in time, or the files are unusable
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from security.rotation import Phase, RollingStep, phases_left, rolling_steps
from security.rotation_files import finish, phase_in_place, write_phase
from security.secret_files import SecretFileError
from security.tls_files import TlsFiles

__all__ = ["RestartTimes", "RollingCluster", "RotationError", "rotate"]


class RotationError(Exception):
    """The rotation stopped: a server did not come back, or a file is unusable. The files
    stay in their phase; running the rotation again resumes from it."""


class RollingCluster(Protocol):
    """The servers of a cluster, as a rotation restarts them."""

    def zookeepers(self) -> tuple[str, ...]:
        """The ZooKeeper servers' service names."""
        ...

    def brokers(self) -> tuple[str, ...]:
        """The brokers' service names."""
        ...

    def zk_leader(self) -> str | None:
        """The ensemble's leader now, if known."""
        ...

    def controller(self) -> str | None:
        """The broker that is the controller now, if known."""
        ...

    def restart(self, service: str) -> None:
        """Stop `service` gracefully and start it again; returns once it was started."""
        ...

    def not_serving(self, service: str) -> str | None:
        """None once `service` serves with the files in place now (a ZooKeeper server in
        the quorum, a broker registered, each accepting the host's client certificate);
        else what is missing."""
        ...


@dataclass(frozen=True, slots=True)
class RestartTimes:
    """How long a rotation waits, and how often it looks."""

    serve_s: float = 180.0
    poll_s: float = 0.5


Say = Callable[[str], None]


def rotate(
    tls_dir: Path,
    cluster: RollingCluster,
    say: Say,
    times: RestartTimes = RestartTimes(),
    *,
    sleep: Callable[[float], None] = time.sleep,
    monotonic: Callable[[], float] = time.monotonic,
) -> None:
    """Rotate the CA of `tls_dir` on `cluster` (resuming a rotation that stopped), saying
    each step; `RotationError` when a server does not serve again within `times.serve_s`.
    Every server must serve before anything is changed."""
    files = TlsFiles(tls_dir)
    try:
        done = phase_in_place(files)
    except SecretFileError as exc:
        raise RotationError(str(exc)) from None
    for service in (*cluster.zookeepers(), *cluster.brokers()):
        problem = cluster.not_serving(service)
        if problem is not None:
            raise RotationError(f"not rotating: {service} does not serve ({problem})")
    if done is not None:
        say(f"resuming the rotation in {tls_dir} at {done.value}")
    for phase in phases_left(done):
        try:
            written = write_phase(files, phase)
        except (SecretFileError, OSError) as exc:
            raise RotationError(f"{phase.value}: {exc}") from None
        say(f"{phase.value}: wrote {', '.join(written) or 'nothing new'}")
        _pass(phase, cluster, say, times, sleep, monotonic)
    finish(files)
    say(f"rotated: {tls_dir} holds the new CA only")


def _pass(
    phase: Phase,
    cluster: RollingCluster,
    say: Say,
    times: RestartTimes,
    sleep: Callable[[float], None],
    monotonic: Callable[[], float],
) -> None:
    """Restart every server once, ZooKeeper first; the leader and the controller are
    read just before their side's turn."""
    zk_steps = rolling_steps(phase, cluster.zookeepers(), (), zk_leader=cluster.zk_leader())
    _restart_each(zk_steps, cluster, say, times, sleep, monotonic)
    broker_steps = rolling_steps(phase, (), cluster.brokers(), controller=cluster.controller())
    _restart_each(broker_steps, cluster, say, times, sleep, monotonic)


def _restart_each(
    steps: tuple[RollingStep, ...],
    cluster: RollingCluster,
    say: Say,
    times: RestartTimes,
    sleep: Callable[[float], None],
    monotonic: Callable[[], float],
) -> None:
    for step in steps:
        began = monotonic()
        say(f"{step.describe()} ...")
        cluster.restart(step.service)
        deadline = began + times.serve_s
        while (problem := cluster.not_serving(step.service)) is not None:
            if monotonic() > deadline:
                raise RotationError(
                    f"{step.describe()}: not serving after {times.serve_s:g}s ({problem})"
                )
            sleep(times.poll_s)
        say(f"{step.describe()}: serving again after {monotonic() - began:.1f}s")
