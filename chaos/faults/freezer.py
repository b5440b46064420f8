"""Whether a host process is frozen by its cgroup's freezer, measured from the host: the
freezer state of the cgroup the process is in (cgroup v1 `freezer.state`, cgroup v2
`cgroup.events`), with the kernel's `State:` line from `/proc/<pid>/status` as detail.

`docker pause` says what docker asked for; this says what the kernel did. Blocking file
reads on the calling thread (the injector's).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class FreezerState:
    """`frozen` when the process's cgroup reports FROZEN; `detail` says what was read."""

    frozen: bool
    detail: str


def freezer_state(
    pid: int, proc: Path = Path("/proc"), cgroup_root: Path = Path("/sys/fs/cgroup")
) -> FreezerState:
    """The freezer state of `pid`'s cgroup (v1 or v2) and its `/proc` state line."""
    try:
        cgroups = (proc / str(pid) / "cgroup").read_text()
    except OSError as exc:
        return FreezerState(False, f"pid {pid}: cannot read its cgroups ({exc.strerror})")
    task = _task_state(proc, pid)
    v1, v2 = _cgroup_paths(cgroups)
    if v1 is not None:
        state = _read(cgroup_root / "freezer" / v1.lstrip("/") / "freezer.state")
        if state is not None:
            return FreezerState(state == "FROZEN", f"pid {pid}: freezer {state}, {task}")
    if v2 is not None:
        events = _read(cgroup_root / v2.lstrip("/") / "cgroup.events")
        if events is not None:
            frozen = "frozen 1" in events.splitlines()
            word = "FROZEN" if frozen else "THAWED"
            return FreezerState(frozen, f"pid {pid}: cgroup.events {word}, {task}")
    return FreezerState(False, f"pid {pid}: no freezer state found, {task}")


def _cgroup_paths(text: str) -> tuple[str | None, str | None]:
    """The v1 freezer hierarchy's path and the v2 unified path of a `/proc/<pid>/cgroup`."""
    v1: str | None = None
    v2: str | None = None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if "freezer" in controllers.split(","):
            v1 = path
        elif controllers == "":
            v2 = path
    return v1, v2


def _task_state(proc: Path, pid: int) -> str:
    status = _read(proc / str(pid) / "status")
    for line in (status or "").splitlines():
        if line.startswith("State:"):
            return "state " + line.split(":", 1)[1].strip()
    return "state unknown"


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None
