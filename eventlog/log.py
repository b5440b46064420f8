"""Append-only JSON-lines event log: `runs/<run-id>/events/<node>.jsonl`.

Each line: `{"v": 1, "ts": <ms since epoch>, "node": "...", "kind": "...", ...fields}`.
Lines are written whole and flushed at once, so a killed process loses at most the line
being written. Safe to call from any thread.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import IO, Any

from eventlog.kinds import SCHEMA_VERSION, EventKind


def event_log_path(run_dir: Path, node: str) -> Path:
    """Where `node` writes its events inside a run directory."""
    return run_dir / "events" / f"{node}.jsonl"


class EventLog:
    """One node's event log."""

    def __init__(self, run_dir: Path | None, node: str) -> None:
        self.node = node
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        if run_dir is not None:
            path = event_log_path(run_dir, node)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
            if _ends_torn(path):
                self._file.write("\n")  # a killed predecessor left half a line
            self.path: Path | None = path
        else:
            self.path = None

    def emit(self, kind: EventKind, **fields: Any) -> dict[str, Any]:
        """Write one event and return it as written."""
        record: dict[str, Any] = {
            "v": SCHEMA_VERSION,
            "ts": int(time.time() * 1000),
            "node": self.node,
            "kind": str(kind),
        }
        record.update(fields)
        line = json.dumps(record, separators=(",", ":"), default=str)
        with self._lock:
            if self._file is not None:
                self._file.write(line + "\n")
                self._file.flush()
        return record

    def close(self) -> None:
        """Flush to disk and close."""
        with self._lock:
            if self._file is not None:
                self._file.flush()
                os.fsync(self._file.fileno())
                self._file.close()
                self._file = None


def _ends_torn(path: Path) -> bool:
    """True when the file is non-empty and does not end with a newline."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return False
        f.seek(-1, os.SEEK_END)
        return f.read(1) != b"\n"


def read_events(path: Path) -> list[dict[str, Any]]:
    """All complete events of one log file (a torn last line is ignored)."""
    out: list[dict[str, Any]] = []
    if not path.exists():
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out
