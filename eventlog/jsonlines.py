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
    yield from numbered_json_lines(path)


def numbered_json_lines(path: Path) -> list[tuple[int, str, object]]:
    """`read_numbered_json_lines` as a list, read and decoded a whole file at a time: a
    report decodes a million lines, and a pass of C calls over a file's lines costs a
    fraction of a Python step per line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    raws = data.split(b"\n")
    # what follows the last newline: nothing, or a line cut short (kept, as a line)
    ends_with_newline = raws[-1] == b""
    if ends_with_newline:
        raws.pop()
    # a newline byte is never part of a UTF-8 sequence, so the text splits as the bytes do
    texts = data.decode("utf-8", errors="replace").split("\n")
    lines = [text + "\n" for text in texts[:-1]]
    if not ends_with_newline:
        lines.append(texts[-1])
    try:
        values: list[object] = list(map(orjson.loads, raws))
    except orjson.JSONDecodeError:
        return [
            (number, line, value)
            for number, (raw, line) in enumerate(zip(raws, lines, strict=True), start=1)
            for value in _decoded(raw, line)
        ]
    return list(zip(range(1, len(raws) + 1), lines, values, strict=True))


def iter_json_lines(path: Path) -> Iterator[tuple[bytes, object]]:
    """Each complete line of `path` as its bytes and its decoded value, one line at a time
    (as `read_json_lines`, which gives the text): memory holds the line being decoded, not
    the file, for a reader that folds each line as it comes (the streaming history
    checker). Lines that are not JSON are skipped; a missing file has none."""
    try:
        file = open(path, "rb")  # noqa: SIM115 - closed below, when the generator ends
    except FileNotFoundError:
        return
    loads, failure = orjson.loads, orjson.JSONDecodeError
    with file:
        for raw in file:
            try:
                yield raw, loads(raw)
            except failure:
                for value in _decoded(raw.rstrip(b"\n"), raw.decode("utf-8", errors="replace")):
                    yield raw, value


def json_line_value(raw: bytes) -> tuple[object, ...]:
    """The value of one line's bytes as `iter_json_lines` decodes it, as a tuple of one;
    none when it is not JSON (torn)."""
    try:
        return (orjson.loads(raw),)
    except orjson.JSONDecodeError:
        return _decoded(raw.rstrip(b"\n"), raw.decode("utf-8", errors="replace"))


def _decoded(raw: bytes, line: str) -> tuple[object, ...]:
    """The value of one line, as a tuple of one; none when it is not JSON (torn)."""
    try:
        # orjson takes a subset of what `json` takes, a few times faster; the rest (NaN,
        # integers beyond 64 bits, bytes that are not UTF-8) `json` decides
        return (orjson.loads(raw),)
    except orjson.JSONDecodeError:
        try:
            return (json.loads(line),)
        except ValueError:
            return ()


def _ends_torn(path: Path) -> bool:
    """True when the file is non-empty and does not end with a newline."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return False
        f.seek(-1, os.SEEK_END)
        return f.read(1) != b"\n"
