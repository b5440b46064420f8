"""`python -m bench.event_emit`: what writing one event costs, in ns per event, for a
typical event of six fields (`controlled_shutdown`), to a file and to no file.

Two ways are timed side by side: `typed`, today's `EventLog.emit(ControlledShutdown(...))`
(the value built by the caller, then encoded), and `untyped`, the former
`emit(kind, **fields)` reproduced here (fields as keywords, checked against the envelope,
then encoded the same way). Both write through the same `JsonLinesWriter` and orjson
encoder, so the ratio is the cost of the typed value. Best of several repeats; main thread.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
import timeit
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from eventlog import SCHEMA_VERSION, ControlledShutdown, EventLog
from eventlog.event import ENVELOPE
from eventlog.jsonlines import JsonLinesWriter
from eventlog.log import encode_event, event_log_path

#: The typed emit may cost at most this much more than the untyped one.
BUDGET = 1.2


class UntypedEventLog:
    """The event log as it was before event types: `emit(kind, **fields)`."""

    def __init__(self, run_dir: Path | None, node: str) -> None:
        self.node = node
        self._writer = JsonLinesWriter(event_log_path(run_dir, node) if run_dir else None)
        self._held = threading.local()

    def emit(self, kind: str, /, **fields: Any) -> dict[str, Any]:
        """Write one event and return it as written."""
        clash = ENVELOPE.intersection(fields)
        if clash:
            raise ValueError(f"event {kind} has fields named like the envelope: {sorted(clash)}")
        record: dict[str, Any] = {
            "v": SCHEMA_VERSION,
            "ts": int(time.time() * 1000),
            "node": self.node,
            "kind": kind,
        }
        record.update(fields)
        line = encode_event(record)
        held: list[str] | None = getattr(self._held, "lines", None)
        if held is None:
            self._writer.append(line)
        else:
            held.append(line)
        return record

    def close(self) -> None:
        """Flush and close the file."""
        self._writer.close()


def _ns_per_call(call: Callable[[], object], number: int, repeat: int) -> float:
    """The best of `repeat` runs of `number` calls, in ns per call."""
    return min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e9


def measure(run_dir: Path | None, number: int, repeat: int) -> tuple[float, float]:
    """ns per event of the untyped and the typed emit, writing under `run_dir` (None: no
    file)."""
    untyped = UntypedEventLog(run_dir, "untyped")
    typed = EventLog(run_dir, "typed")
    try:

        def emit_untyped() -> None:
            untyped.emit(
                "controlled_shutdown",
                broker_id=1,
                broker_epoch=4294967296,
                led=120,
                followed=240,
                remaining=0,
                controller_epoch=7,
            )

        def emit_typed() -> None:
            typed.emit(
                ControlledShutdown(
                    broker_id=1,
                    broker_epoch=4294967296,
                    led=120,
                    followed=240,
                    remaining=0,
                    controller_epoch=7,
                )
            )

        before = after = float("inf")
        for _ in range(repeat):  # the two in turn, so that a busy moment hits both
            before = min(before, _ns_per_call(emit_untyped, number, 1))
            after = min(after, _ns_per_call(emit_typed, number, 1))
        return before, after
    finally:
        untyped.close()
        typed.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table; exit 1 when the typed emit is over `BUDGET` times the untyped."""
    parser = argparse.ArgumentParser(prog="python -m bench.event_emit", description=__doc__)
    parser.add_argument("--number", type=int, default=20_000, help="events per repeat")
    parser.add_argument("--repeat", type=int, default=9, help="repeats (the best is kept)")
    args = parser.parse_args(argv)
    over = False
    print(f"{'target':<8} {'untyped ns':>11} {'typed ns':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, run_dir in (("file", Path(tmp)), ("none", None)):
            before, after = measure(run_dir, args.number, args.repeat)
            ratio = after / before
            over |= ratio > BUDGET
            print(f"{name:<8} {before:>11.0f} {after:>9.0f} {ratio:>6.2f}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
