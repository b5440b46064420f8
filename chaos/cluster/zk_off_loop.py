"""ZooKeeper reads kept off the runner's step loop, so the steps (faults and their undo)
run on time whatever ZooKeeper does.

A kazoo read made while the handle's session has no server to talk to (two of three
servers frozen: no quorum, and no session expires either) waits for the reconnection, for
as long as the outage lasts; made on the step loop it would hold back the very step that
gives the quorum back. So:

- `ControllerWatch` reads the controller and its epoch on its own thread
  (`chaos-controller-watch`) and publishes the latest answer; the live view and the status
  take what was last published and never wait. An answer older than `STALE_S` counts as
  unknown.
- `within` runs one read the step needs (resolving a role, a scheduled action) on a
  helper thread and gives up after a deadline with `ZkNoAnswer`, a `FaultFailed`
  (`STEP_READ_S`, `ACTION_READ_S` for an action); the read it abandons finishes, or not,
  on its own daemon thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from chaos.errors import ChaosError, FaultFailed
from zkdata.errors import ZkDataError

T = TypeVar("T")

#: Seconds between two reads of the controller.
READ_EVERY_S = 1.0
#: An answer older than this is unknown: the watch's read is stuck or failing.
STALE_S = 3.0
#: Seconds an admin action's ZooKeeper work may take before it is given up: long enough
#: for the session, when the server it talks to was just frozen, to notice (two thirds of
#: its 6 s timeout, `chaos.cluster.handle.ZK_SESSION_S`), try another server (a third of
#: the timeout each) and answer.
ACTION_READ_S = 10.0
#: Seconds a read a step needs (resolving its role) may take before the step gives it up:
#: as long as an action's, for the same reason. Each step runs on a thread of its own, so
#: a slow read makes only its own step late; a shorter deadline failed the steps whose
#: role was read while another step had just frozen a ZooKeeper server.
STEP_READ_S = ACTION_READ_S


class ZkNoAnswer(FaultFailed):
    """A read `within` gave up on: ZooKeeper did not answer before the deadline."""


@dataclass(frozen=True)
class ControllerSeen:
    """The controller and its epoch as last read; `known` False: no fresh answer."""

    controller: int | None
    epoch: int | None
    known: bool


class ControllerWatch:
    """Reads `read()` (controller id, epoch) every `every_s` on its own daemon thread and
    keeps the latest answer; `seen()` never blocks. Use as a context manager."""

    def __init__(
        self,
        read: Callable[[], tuple[int | None, int | None]],
        every_s: float = READ_EVERY_S,
        stale_s: float = STALE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if every_s <= 0 or stale_s <= 0:
            raise ValueError(f"every_s and stale_s must be > 0, got {every_s}, {stale_s}")
        self._read = read
        self._every_s = every_s
        self._stale_s = stale_s
        self._clock = clock
        self._lock = threading.Lock()
        self._latest: tuple[float, int | None, int | None] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._loop, name="chaos-controller-watch", daemon=True
        )

    def __enter__(self) -> ControllerWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        # not joined: a read stuck in kazoo must not hold up the run's end either
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                controller, epoch = self._read()
            except (ChaosError, ZkDataError):  # a failed read leaves the controller unknown
                controller, epoch = None, None
            with self._lock:
                self._latest = (self._clock(), controller, epoch)
            self._stop.wait(self._every_s)

    def seen(self) -> ControllerSeen:
        """The latest answer, unknown when none is younger than `stale_s`."""
        with self._lock:
            latest = self._latest
        if latest is None or self._clock() - latest[0] > self._stale_s:
            return ControllerSeen(None, None, known=False)
        return ControllerSeen(latest[1], latest[2], known=True)


def within(call: Callable[[], T], deadline_s: float, what: str) -> T:
    """`call()`'s result, or `ZkNoAnswer` when it has not returned after `deadline_s`
    (ZooKeeper without quorum); its own exceptions are raised as they are."""
    if deadline_s <= 0:
        raise ValueError(f"deadline_s must be > 0, got {deadline_s}")
    outcome: list[tuple[bool, object]] = []
    done = threading.Event()

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=run, name="chaos-step-read", daemon=True).start()
    if not done.wait(deadline_s):
        raise ZkNoAnswer(f"{what}: no answer from ZooKeeper within {deadline_s:g} s")
    ok, value = outcome[0]
    if not ok:
        assert isinstance(value, BaseException)
        raise value
    return value  # type: ignore[return-value]
