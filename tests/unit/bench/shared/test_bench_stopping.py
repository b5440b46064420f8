"""`bench.shared.stopping`: a benchmark whose unwinding is swallowed (as kazoo's bare `except:`
swallows it) still ends on SIGTERM, after the grace or at a second signal, and takes its
child processes with it.

Each test runs a small program that installs the handlers, starts a child process that
would run for ten minutes, writes the child's pid to a file and then loops, swallowing
every exception (and says so in a file, so that a second signal follows the first one's
handling, as a second Ctrl-C does)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.shared.stopping import child_pids
from harness.waiting import wait_until

REPO_ROOT = Path(__file__).resolve().parents[4]
PROGRAM = """
import subprocess, sys, time
from pathlib import Path
from bench.shared.stopping import StopOnSignal

StopOnSignal(grace_s=float(sys.argv[2])).install()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
Path(sys.argv[1]).write_text(str(child.pid))
while True:  # swallows the SystemExit of the first signal, as kazoo may
    try:
        time.sleep(0.05)
    except BaseException:
        Path(sys.argv[1] + ".swallowed").write_text("yes")
"""


def _gone(pid: int) -> bool:
    """Ended (a zombie waiting to be reaped counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"


@contextmanager
def _running(tmp_path: Path, grace_s: float) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """The program above and its child's pid; both are killed afterwards if still there."""
    script = tmp_path / "swallowing.py"
    script.write_text(PROGRAM)
    pid_file = tmp_path / "child.pid"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen([sys.executable, str(script), str(pid_file), str(grace_s)], env=env)
    child = None
    try:
        wait_until(
            lambda: pid_file.exists() and pid_file.read_text(), 20, "the program never started"
        )
        child = int(pid_file.read_text())
        yield proc, child
    finally:
        proc.kill()
        if child is not None and not _gone(child):
            os.kill(child, signal.SIGKILL)


def _ends_with_its_child(proc: subprocess.Popen[bytes], child: int, code: int) -> None:
    assert proc.wait(timeout=30) == code
    wait_until(lambda: _gone(child), 10, "the child process outlived the run")


def test_a_swallowed_sigterm_ends_the_run_after_the_grace(tmp_path: Path) -> None:
    with _running(tmp_path, grace_s=0.5) as (proc, child):
        proc.send_signal(signal.SIGTERM)
        _ends_with_its_child(proc, child, 128 + signal.SIGTERM)


def test_a_second_signal_ends_the_run_at_once(tmp_path: Path) -> None:
    with _running(tmp_path, grace_s=600) as (proc, child):
        proc.send_signal(signal.SIGTERM)
        swallowed = tmp_path / "child.pid.swallowed"
        wait_until(swallowed.exists, 20, "the first signal was never handled")
        proc.send_signal(signal.SIGINT)
        _ends_with_its_child(proc, child, 128 + signal.SIGINT)


def test_child_pids_names_the_children_of_a_process() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        assert child.pid in child_pids(os.getpid())
        assert child.pid not in child_pids(child.pid)
    finally:
        child.kill()
        child.wait(10)
