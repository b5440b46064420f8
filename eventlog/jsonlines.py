"""JSON lines on disk: the one writer behind node event logs and workload histories, and
the reader of what it wrote.

A line is written whole and flushed at once, so a killed process loses at most the line
being written; a file that a killed predecessor left torn gets a newline before the next
line, and readers skip a line that does not decode. `JsonLinesWriter` is safe from any
thread: lines from concurrent callers never interleave.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

import orjson


class JsonLinesWriter:
    """Appends lines to `path` (created with its directory); `path` None keeps nothing."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
            if _ends_torn(path):
                self._file.write("\n")  # a killed predecessor left half a line

    def append(self, line: str) -> None:
        """Write `line` (one JSON document, no newline) and flush it."""
        with self._lock:
            if self._file is not None:
                self._file.write(line + "\n")
                self._file.flush()

    def append_many(self, lines: Sequence[str]) -> None:
        """Write `lines` together, in one write and one flush (none interleave with them)."""
        if not lines:
            return
        with self._lock:
            if self._file is not None:
                self._file.write("\n".join(lines) + "\n")
                self._file.flush()

    def close(self) -> None:
        """Flush to disk and close; later lines are dropped."""
        with self._lock:
            if self._file is not None:
                self._file.flush()
                os.fsync(self._file.fileno())
                self._file.close()
                self._file = None


def read_json_lines(path: Path) -> Iterator[tuple[str, object]]:
    """Each complete line of `path` with its decoded value; lines that are not JSON (a torn
    last write) are skipped, and a missing file has none."""
    for _, line, value in read_numbered_json_lines(path):
        yield line, value


def read_numbered_json_lines(path: Path) -> Iterator[tuple[int, str, object]]:
    """As `read_json_lines`, with each line's number in the file (1-based, torn lines
    counted; a line ends at a newline), so a reader can point at the line it judges."""
    if not path.exists():
        return
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            line = raw.decode("utf-8", errors="replace")
            try:
                # orjson takes a subset of what `json` takes, a few times faster; the rest
                # (NaN, integers beyond 64 bits, bytes that are not UTF-8) `json` decides
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
            yield number, line, value


def _ends_torn(path: Path) -> bool:
    """True when the file is non-empty and does not end with a newline."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return False
        f.seek(-1, os.SEEK_END)
        return f.read(1) != b"\n"
