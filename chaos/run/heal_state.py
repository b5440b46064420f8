"""The heal state: which faults may still be in effect, on disk, so that whatever happens
to the process that started them (Ctrl-C, SIGKILL, a crash) `python -m chaos heal` can
undo them.

Two files, each replaced atomically (written beside, fsynced, renamed):

    <run_dir>/faults.state.json     {"version": 1, "project": P, "faults": [
                                       {"id", "kind", "targets", "data", "started_ms"}, ...]}
    <state_dir>/<project>.json      {"version": 1, "project": P, "state_files": [...]}

The first holds a run's active faults, `data` being the fault's `describe()`; the second
points from a compose project to every run state file that holds faults for it, so heal
needs only the project name. `state_dir` is `runs/.chaos-state` for runs under `runs/`.
An entry is added before its fault starts and removed once its undo is verified.

Runs on the injector's thread; one writer per run directory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chaos.errors import ChaosError

STATE_FILE = "faults.state.json"
STATE_DIR = ".chaos-state"
VERSION = 1


class HealStateError(ChaosError):
    """A state or pointer file that cannot be read or does not belong to the project."""


@dataclass(frozen=True, slots=True)
class ActiveFault:
    """One fault recorded as possibly in effect."""

    id: str
    kind: str
    targets: tuple[str, ...]
    data: Mapping[str, Any]
    started_ms: int

    def to_json(self) -> dict[str, Any]:
        """The entry as stored."""
        return {
            "id": self.id,
            "kind": self.kind,
            "targets": list(self.targets),
            "data": dict(self.data),
            "started_ms": self.started_ms,
        }

    @staticmethod
    def from_json(entry: Any, where: Path) -> ActiveFault:
        """An entry read back; `HealStateError` naming the file when it is not one."""
        try:
            return ActiveFault(
                str(entry["id"]),
                str(entry["kind"]),
                tuple(str(t) for t in entry["targets"]),
                dict(entry["data"]),
                int(entry["started_ms"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise HealStateError(f"{where}: malformed fault entry {entry!r} ({exc!r})") from None


def pointer_path(state_dir: Path, project: str) -> Path:
    """Where the project's pointer lives."""
    return state_dir / f"{project}.json"


class HealState:
    """The active faults of one run directory for one project, and the project's pointer."""

    def __init__(self, run_dir: Path, project: str, state_dir: Path | None = None) -> None:
        self.path = run_dir / STATE_FILE
        self.project = project
        self.pointer = pointer_path(state_dir or run_dir.parent / STATE_DIR, project)

    def load(self) -> list[ActiveFault]:
        """The faults recorded, oldest first ([] without a state file)."""
        document = _read(self.path)
        if document is None:
            return []
        if document.get("project") != self.project:
            raise HealStateError(
                f"{self.path} holds faults of project {document.get('project')!r}, "
                f"not {self.project!r}"
            )
        faults = document.get("faults")
        if not isinstance(faults, list):
            raise HealStateError(f"{self.path}: `faults` is not a list")
        return [ActiveFault.from_json(entry, self.path) for entry in faults]

    def add(self, fault: ActiveFault) -> None:
        """Record `fault` (the state file first, then the pointer to it)."""
        faults = [f for f in self.load() if f.id != fault.id]
        self._write([*faults, fault])

    def remove(self, fault_id: str) -> None:
        """Forget the fault; the pointer drops the run once no fault is left in it."""
        self._write([f for f in self.load() if f.id != fault_id])

    def _write(self, faults: list[ActiveFault]) -> None:
        document = {
            "version": VERSION,
            "project": self.project,
            "faults": [f.to_json() for f in faults],
        }
        _replace(self.path, document)
        listed = state_files(self.pointer.parent, self.project)
        mine = self.path.resolve()
        wanted = [p for p in listed if p != mine] + ([mine] if faults else [])
        if wanted != listed:
            write_pointer(self.pointer, self.project, wanted)


def state_files(state_dir: Path, project: str) -> list[Path]:
    """The run state files the project's pointer lists ([] without a pointer)."""
    path = pointer_path(state_dir, project)
    document = _read(path)
    if document is None:
        return []
    files = document.get("state_files")
    if document.get("project") != project or not isinstance(files, list):
        raise HealStateError(f"{path} is not a heal pointer of project {project!r}")
    return [Path(str(f)) for f in files]


def write_pointer(path: Path, project: str, files: list[Path]) -> None:
    """Replace the pointer (removing it when it lists nothing)."""
    if not files:
        path.unlink(missing_ok=True)
        return
    _replace(path, {"version": VERSION, "project": project, "state_files": list(map(str, files))})


def _read(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HealStateError(f"cannot read {path}: {exc.strerror}") from None
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise HealStateError(f"{path} is not JSON ({exc}); fix or remove it by hand") from None
    if not isinstance(document, dict):
        raise HealStateError(f"{path} is not a JSON object")
    return document


def _replace(path: Path, document: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(scratch, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=1, sort_keys=True)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(scratch, path)
