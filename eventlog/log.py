"""Append-only JSON-lines event log: `runs/<run-id>/events/<node>.jsonl`.

Each line: `{"v": 1, "ts": <ms since epoch>, "node": "...", "kind": "...", "seq": <n>,
"mono_ms": <ms>, ...fields}`: `ts` is the node's wall clock, which a clock fault may move;
`seq` counts the events of the process from 1 in the order they were emitted, and
`mono_ms` is the node's monotonic clock (CLOCK_MONOTONIC, which no fault moves and which
every container of one docker host shares with the host). Readers order one node's
events by `seq` and put events of different nodes on the host's time line through
`mono_ms` (`rundir.reader`), never by comparing the `ts` of two nodes. Lines go through
`eventlog.jsonlines` (written whole, flushed at once). Safe to call from any thread.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from eventlog.columns import expand_numbered
from eventlog.event import Event
from eventlog.jsonlines import JsonLinesWriter, numbered_json_lines


def event_log_path(run_dir: Path, node: str) -> Path:
    """Where `node` writes its events inside a run directory."""
    return run_dir / "events" / f"{node}.jsonl"


#: Events are encoded by orjson (about a tenth of `json`'s time: a state change of 100,000
#: partitions writes 100,000 events), with `json`'s output for what orjson would write
#: otherwise: dataclasses and dates as their `str`. What orjson refuses (keys that are not
#: strings, an integer beyond 64 bits) goes to `json`. Two differences remain, both still
#: JSON: text beyond ASCII is written as UTF-8, not escaped, and a NaN or infinite float is
#: written as null (`json` wrote `NaN`, which JSON parsers other than Python's refuse).
_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
#: The fallback encoder (`json.dumps` with options builds a new one per call).
_ENCODER = json.JSONEncoder(separators=(",", ":"), default=str)


def encode_event(record: dict[str, Any]) -> str:
    """One event as a line of JSON (no newline)."""
    try:
        return orjson.dumps(record, default=str, option=_ORJSON_OPTIONS).decode()
    except TypeError:  # orjson.JSONEncodeError
        return _ENCODER.encode(record)


def event_record(
    event: Event, ts: int, node: str, seq: int | None = None, mono_ms: int | None = None
) -> dict[str, Any]:
    """The record `node` writes for `event` at `ts` (ms since the epoch): the envelope, then
    the event's fields in the order its type declares them, an `ABSENT` one left out; `seq`
    and `mono_ms` are left out when not given (a writer that has no such clock)."""
    record = event._encoding.record(event, ts, node, seq, mono_ms)
    if seq is None:
        del record["seq"]
    if mono_ms is None:
        del record["mono_ms"]
    return record


class EventLog:
    """One node's event log."""

    def __init__(self, run_dir: Path | None, node: str) -> None:
        self.node = node
        self.path: Path | None = event_log_path(run_dir, node) if run_dir is not None else None
        self._writer = JsonLinesWriter(self.path)
        self._held = threading.local()
        self._seq = itertools.count(1)  # next() on a count is atomic under the GIL

    def emit(self, event: Event, /) -> dict[str, Any]:
        """Write one event and return it as written: the envelope (`v`, `ts`, `node`,
        `kind`, `seq`, `mono_ms`), then the event's fields in the order its type declares
        them (an `ABSENT` one left out)."""
        record = event._encoding.record(
            event,
            int(time.time() * 1000),
            self.node,
            next(self._seq),
            time.monotonic_ns() // 1_000_000,
        )
        line = encode_event(record)
        held: list[str] | None = getattr(self._held, "lines", None)
        if held is None:
            self._writer.append(line)
        else:
            held.append(line)
        return record

    @contextmanager
    def together(self) -> Iterator[None]:
        """Events this thread emits inside the block are written together when it ends: one
        write instead of one per event (a state change of 10,000 partitions emits 10,000
        events, and on a busy box every write gives the GIL away). Each keeps the time it
        was emitted at; other threads write as usual meanwhile. Nested blocks join the
        outermost."""
        if getattr(self._held, "lines", None) is not None:
            yield
            return
        self._held.lines = []
        try:
            yield
        finally:
            lines, self._held.lines = self._held.lines, None
            self._writer.append_many(lines)

    def close(self) -> None:
        """Flush to disk and close."""
        self._writer.close()


def read_events(path: Path) -> list[dict[str, Any]]:
    """All complete events of one log file (a torn last line is ignored), a round's columns
    expanded into its partitions' facts (`eventlog.columns.expand`)."""
    return [value for _, value in read_numbered_events(path)]


def read_numbered_events(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Every complete event of one log file with its line number (1-based; torn lines are
    skipped but counted), a round's columns expanded into its partitions' facts, each
    with the round's line number (`eventlog.columns.expand_numbered`; its
    `EventDecodeError` for a round that does not expand)."""
    return expand_numbered(
        (number, value) for number, _, value in numbered_json_lines(path) if isinstance(value, dict)
    )
