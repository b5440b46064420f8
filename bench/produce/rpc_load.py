"""Timed load from a few client threads: each repeats one operation until a deadline.

`run_load` starts `threads` worker threads, releases them together, and has each call
`op(thread_index, n)` for n = 0, 1, ... until `duration_s` has passed (or `max_ops`
operations, whichever comes first), timing every call. The main thread prints a progress
line every second and joins the workers with a deadline: a worker still busy `grace_s`
after the end raises `TimeoutError`; an exception in a worker ends the run with
`LoadError`. `metadata_op` is the floor's operation: one Metadata RPC for one topic.

Workers only touch their own `_Tally`; the main thread reads the counters for progress
(plain ints, read under the GIL) and merges the tallies once the workers have ended.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.shared import console
from client import ApiLike, TransportError

#: No worker does more operations than this in one run, whatever its duration.
MAX_OPS_PER_THREAD = 2_000_000
#: How long workers may take to line up at the start.
START_TIMEOUT_S = 10.0
PROGRESS_INTERVAL_S = 1.0


class LoadError(RuntimeError):
    """A worker thread failed with an unexpected exception."""


@dataclass(frozen=True, slots=True)
class OpResult:
    """One operation: whether it succeeded, the units it moved (e.g. records), and the
    error names met on the way (one per failed attempt, retries included)."""

    ok: bool
    units: int = 1
    errors: tuple[str, ...] = ()


Op = Callable[[int, int], OpResult]


@dataclass(slots=True)
class _Tally:
    ok: int = 0
    failed: int = 0
    units: int = 0
    latencies_s: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    crash: BaseException | None = None


def percentile(sorted_values: list[float], q: float) -> float:
    """The `q`-quantile (0..1) of already sorted values, nearest rank; NaN when empty."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


@dataclass(frozen=True, slots=True)
class LoadResult:
    """What the threads did: successful and failed operations, units moved, wall time from
    the release to the last worker's end, latencies of the successful operations."""

    threads: int
    seconds: float
    ok: int
    failed: int
    units: int
    errors: dict[str, int]
    p50_s: float
    p99_s: float
    mean_s: float
    max_s: float
    started_wall: float
    ended_wall: float

    @property
    def rate(self) -> float:
        """Successful operations per second."""
        return self.ok / self.seconds if self.seconds > 0 else 0.0

    @property
    def units_rate(self) -> float:
        """Units moved per second."""
        return self.units / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        """Plain values for JSON (latencies in ms)."""
        return {
            "threads": self.threads,
            "seconds": round(self.seconds, 4),
            "ok": self.ok,
            "failed": self.failed,
            "units": self.units,
            "ops_per_s": round(self.rate, 2),
            "units_per_s": round(self.units_rate, 2),
            "latency_ms": {
                "p50": _ms(self.p50_s),
                "p99": _ms(self.p99_s),
                "mean": _ms(self.mean_s),
                "max": _ms(self.max_s),
            },
            "errors": dict(self.errors),
        }


def _ms(seconds: float) -> float | None:
    return None if math.isnan(seconds) else round(seconds * 1000, 3)


def run_load(
    label: str,
    op: Op,
    threads: int,
    duration_s: float,
    grace_s: float,
    max_ops: int = MAX_OPS_PER_THREAD,
    unit: str = "ops",
) -> LoadResult:
    """Run `op` from `threads` threads for `duration_s` seconds; see the module docstring."""
    tallies = [_Tally() for _ in range(threads)]
    go = threading.Event()
    deadline = [0.0]  # set by the main thread just before `go`

    def work(index: int) -> None:
        tally = tallies[index]
        if not go.wait(START_TIMEOUT_S):
            return
        end = deadline[0]
        try:
            for n in range(max_ops):
                if time.monotonic() >= end:
                    break
                started = time.perf_counter()
                result = op(index, n)
                took = time.perf_counter() - started
                tally.errors.update(result.errors)
                if result.ok:
                    tally.ok += 1
                    tally.units += result.units
                    tally.latencies_s.append(took)
                else:
                    tally.failed += 1
        except BaseException as exc:  # reported by the main thread
            tally.crash = exc

    workers = [
        threading.Thread(target=work, args=(i,), name=f"bench-{label}-{i}", daemon=True)
        for i in range(threads)
    ]
    for worker in workers:
        worker.start()
    started = time.monotonic()
    started_wall = time.time()
    deadline[0] = started + duration_s
    go.set()
    _wait_for(workers, tallies, started, duration_s, grace_s, unit)
    seconds = time.monotonic() - started
    ended_wall = time.time()
    for i, tally in enumerate(tallies):
        if tally.crash is not None:
            raise LoadError(f"{label} thread {i} failed: {tally.crash!r}") from tally.crash
    latencies = sorted(x for t in tallies for x in t.latencies_s)
    errors: Counter[str] = Counter()
    for tally in tallies:
        errors.update(tally.errors)
    return LoadResult(
        threads=threads,
        seconds=seconds,
        ok=sum(t.ok for t in tallies),
        failed=sum(t.failed for t in tallies),
        units=sum(t.units for t in tallies),
        errors=dict(errors.most_common()),
        p50_s=percentile(latencies, 0.50),
        p99_s=percentile(latencies, 0.99),
        mean_s=sum(latencies) / len(latencies) if latencies else math.nan,
        max_s=latencies[-1] if latencies else math.nan,
        started_wall=started_wall,
        ended_wall=ended_wall,
    )


def _wait_for(
    workers: list[threading.Thread],
    tallies: list[_Tally],
    started: float,
    duration_s: float,
    grace_s: float,
    unit: str,
) -> None:
    """Join the workers, printing progress each second; `TimeoutError` past the grace."""
    give_up = started + duration_s + grace_s
    next_progress = started + PROGRESS_INTERVAL_S
    for worker in workers:
        while worker.is_alive():
            now = time.monotonic()
            if now >= give_up:
                busy = sum(w.is_alive() for w in workers)
                raise TimeoutError(
                    f"{busy} of {len(workers)} client threads still busy "
                    f"{now - started - duration_s:.1f} s after the end of the run"
                )
            if now >= next_progress:
                next_progress += PROGRESS_INTERVAL_S
                _progress(tallies, now - started, unit)
            worker.join(min(0.2, give_up - now, max(0.01, next_progress - now)))


def _progress(tallies: list[_Tally], elapsed: float, unit: str) -> None:
    ok = sum(t.ok for t in tallies)
    units = sum(t.units for t in tallies)
    failed = sum(t.failed for t in tallies)
    errors = sum(sum(t.errors.values()) for t in tallies)
    moved = f", {units:,} {unit}" if units != ok else ""
    console.detail(
        f"  {elapsed:5.1f} s: {ok:,} ok ({ok / elapsed:,.0f}/s){moved}, "
        f"{failed} failed, {errors} attempt errors"
    )


def metadata_op(client: ApiLike, topic: str) -> Op:
    """One Metadata RPC for `topic` (the floor: a small request and reply, no disk, no
    replication); every thread shares `client`'s channel."""
    topics = (topic,)

    def op(_index: int, _n: int) -> OpResult:
        try:
            client.metadata(topics)
        except TransportError as exc:
            return OpResult(False, 0, (exc.name,))
        return OpResult(True)

    return op


def warm_up(client: ApiLike, topic: str, calls: int, timeout_s: float) -> float:
    """`calls` sequential Metadata RPCs (connection set up, code paths warm); returns the
    seconds taken. `TimeoutError` past `timeout_s`."""
    started = time.monotonic()
    for _ in range(calls):
        client.metadata((topic,))
        if time.monotonic() - started > timeout_s:
            raise TimeoutError(f"{calls} warm-up Metadata calls took over {timeout_s:.0f} s")
    return time.monotonic() - started
