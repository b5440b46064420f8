"""What the docker tier's fault tests share: `in_effect`, a fault's full injector cycle
on a real cluster (started, in effect, stopped, undone, every phase logged and nothing
left in the heal state), `killed_mid_fault`, a runner process SIGKILLed while its faults
are in effect, and `heal`, `python -m chaos heal` as a user runs it. Each raises
`AssertionError` saying what did not hold. For tests only; the caller's thread.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from chaos.faults.base import Fault, FaultTarget
from chaos.run.heal_state import HealState
from chaos.run.injector import FAULT_LOG, Deadlines, Injection, Injector
from eventlog.jsonlines import read_json_lines

FULL_CYCLE = [("start", True), ("took_effect", True), ("stop", True), ("undone", True)]
#: What a runner script prints once every fault it started is in effect.
IN_EFFECT = "in effect"


def phases(run_dir: Path) -> list[tuple[str, bool]]:
    """`(phase, ok)` of every line of the run's `faults.jsonl`."""
    lines = [line for _, line in read_json_lines(run_dir / FAULT_LOG) if isinstance(line, dict)]
    return [(line["phase"], line["ok"]) for line in lines]


def _require(holds: bool, what: str) -> None:
    if not holds:
        raise AssertionError(what)


@contextmanager
def in_effect(
    cluster: FaultTarget, run_dir: Path, fault: Fault, deadlines: Deadlines
) -> Iterator[Injection]:
    """Start `fault` through an injector (it must take effect), yield while it is in
    effect, then stop it (it must be undone); every phase logged and ok, nothing left in
    the heal state."""
    with Injector(cluster, run_dir, deadlines=deadlines) as injector:
        started = injector.start(fault)
        _require(started.ok, f"{fault.kind} did not take effect: {started.check.detail}")
        yield started
        stopped = injector.stop(started.fault_id)
        _require(stopped.ok, f"{fault.kind} was not undone: {stopped.check.detail}")
    _require(phases(run_dir) == FULL_CYCLE, f"phases logged: {phases(run_dir)}")
    left = HealState(run_dir, cluster.project).load()
    _require(left == [], f"left in the heal state: {left}")


def killed_mid_fault(script: str, args: list[str], cwd: Path) -> None:
    """Run `python -c script *args`, wait until it prints `IN_EFFECT`, SIGKILL it."""
    runner = subprocess.Popen(
        [sys.executable, "-c", script, *args], cwd=cwd, stdout=subprocess.PIPE, text=True
    )
    try:
        said = runner.stdout.readline().strip() if runner.stdout is not None else ""
        _require(said == IN_EFFECT, f"the runner said {said!r}, not {IN_EFFECT!r}")
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=30)


def heal(project: str, state_dir: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m chaos heal --project project --state-dir state_dir`, its output kept."""
    return subprocess.run(
        [sys.executable, "-m", "chaos", "heal", "--project", project, "--state-dir", state_dir],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
