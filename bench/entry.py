"""The shared ending of every benchmark's `main`: check that ZooKeeper can start, turn
SIGTERM into an unwind (so the ensemble and brokers are stopped), run, report the failures
a benchmark names as such, print the table and write `bench.json`. Main thread."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TypeVar

from harness.zk_ensemble import missing_prerequisites

EXIT_FAILED = 1
EXIT_USAGE = 2

R = TypeVar("R")


def _raise_system_exit(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM: unwind like Ctrl-C so that the ensemble and brokers are stopped."""
    raise SystemExit(128 + signum)


def run_benchmark(
    run: Callable[[], R],
    out_dir: Path,
    failures: tuple[type[BaseException], ...],
    render: Callable[[R], str],
    write: Callable[[R, Path], None],
) -> int:
    """Run one benchmark and return the process exit code (0, 1 failed, 2 cannot start)."""
    missing = missing_prerequisites()
    if missing:
        print("bench: cannot start ZooKeeper: " + "; ".join(missing), file=sys.stderr)
        return EXIT_USAGE
    signal.signal(signal.SIGTERM, _raise_system_exit)
    try:
        result = run()
    except TimeoutError as exc:
        print(f"bench: a step timed out: {exc}\n(logs in {out_dir})", file=sys.stderr)
        return EXIT_FAILED
    except failures as exc:
        print(f"bench: failed: {exc}\n(logs in {out_dir})", file=sys.stderr)
        return EXIT_FAILED
    print()
    print(render(result))
    out = out_dir / "bench.json"
    write(result, out)
    print(f"\nwrote {out}")
    return 0
