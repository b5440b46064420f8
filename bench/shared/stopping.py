"""Stopping a benchmark on SIGTERM or Ctrl-C, even where a library swallows the unwinding.

The first SIGTERM or SIGINT raises `SystemExit(128 + signal)` in the main thread, which
unwinds the run's cleanup (brokers killed, the ensemble stopped, data dropped). kazoo
catches every exception around the write that wakes its connection thread (a bare
`except:` in `KazooClient._call`), so a signal that lands there is swallowed, and once
ZooKeeper is gone that write can block for good: the benchmark would neither stop nor
kill its broker processes. So the first signal also arms a watchdog: if the process is
still running `grace_s` later, or when a second signal comes, every child process
(brokers, ZooKeeper servers, py-spy) is killed and the process ends at once with the same
code (two signals that arrive together may be handled as one; the watchdog still ends
the run). Linux only (children are found in `/proc`). Main thread installs; the watchdog is a
daemon timer thread.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

#: How long the first signal's unwinding may take before the watchdog ends the process
#: (stopping three ZooKeeper JVMs and dropping 100,000 partitions' data takes well under).
STOP_GRACE_S = 120.0
SIGNALS = (signal.SIGTERM, signal.SIGINT)


def child_pids(pid: int) -> list[int]:
    """The processes whose parent is `pid`, from `/proc/<pid>/stat`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # it ended meanwhile
        # pid (comm) state ppid ...: comm may hold spaces and parentheses
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def kill_children() -> None:
    """SIGKILL every child process of this one."""
    for pid in child_pids(os.getpid()):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class StopOnSignal:
    """The handlers described in the module docstring."""

    def __init__(self, grace_s: float = STOP_GRACE_S) -> None:
        self.grace_s = grace_s
        self._signalled = threading.Event()

    def install(self) -> None:
        """Handle SIGTERM and SIGINT from now on (main thread)."""
        for signum in SIGNALS:
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        code = 128 + signum
        if self._signalled.is_set():
            self._end(code, "a second signal")
        self._signalled.set()
        watchdog = threading.Timer(
            self.grace_s, self._end, (code, f"still running {self.grace_s:g} s after the signal")
        )
        watchdog.daemon = True
        watchdog.start()
        raise SystemExit(code)

    @staticmethod
    def _end(code: int, why: str) -> None:
        print(f"bench: {why}: killing its processes and ending now", file=sys.stderr)
        sys.stderr.flush()
        kill_children()
        os._exit(code)
