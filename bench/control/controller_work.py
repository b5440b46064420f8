"""The controller's own work in a failover after kill -9, in-process, without ZooKeeper or
brokers: `python -m controller.failover_timing` run in a child process of its own (the
benchmarks never import the controller), its figures turned into rows.

Three rows per size, each against its floor from the same child: the live replicas to
OnlineReplica, the dead broker's replicas to OfflineReplica (ISR shrinks), and the
elections of the dead broker's leaderships; the time spent building and cutting the
requests (`RequestBatch.send`) is in the notes. What the steps and the floors do is in
the child's docstring and docs/performance.md. Main thread.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from bench.shared import console
from bench.shared.report import Measure

MODULE = "controller.failover_timing"
#: 100,000 partitions, three runs, took a minute at a load average of 8 (5 December).
TIMEOUT_S = 600.0
#: Runs of the child's steps at least: they are cheap, and one run on a busy box says little.
MIN_RUNS = 3

#: step -> (measure name, label, floor in words given the counts)
_ROWS: tuple[tuple[str, str, str, str], ...] = (
    (
        "online",
        "controller_own_online",
        "replicas to OnlineReplica",
        "a plain pass storing each of {replicas_online:,} replica states and appending a "
        "request entry",
    ),
    (
        "offline",
        "controller_own_offline",
        "replicas to OfflineReplica",
        "a plain pass storing each of {replicas_offline:,} replica states, a stop entry, "
        "the shrunk state twice and a request entry",
    ),
    (
        "elections",
        "controller_own_elections",
        "elections",
        "a plain pass deriving {partitions:,} partition states and electing, storing "
        "twice and queueing {elections:,} leaders",
    ),
)


def run_child(partitions: int, topics: int, runs: int) -> dict[str, Any]:
    """The child's JSON object (`RuntimeError` if it fails)."""
    args = [
        sys.executable,
        "-m",
        MODULE,
        "--partitions",
        str(partitions),
        "--topics",
        str(topics),
        "--runs",
        str(runs),
    ]
    done = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{MODULE} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def rows(timing: dict[str, Any]) -> list[Measure]:
    """One row per step of `timing` (the child's object)."""
    n = timing["partitions"]
    runs = timing["runs"]
    out = []
    for step, name, what, floor in _ROWS:
        figures = timing["controller_runs"][step]
        spread = (
            f"median of {runs} runs ({min(figures):.3f} to {max(figures):.3f} s); "
            if runs > 1
            else ""
        )
        out.append(
            Measure(
                name,
                f"controller alone: {what}, {n:,} partitions",
                n,
                timing["controller"][step],
                timing["floor"][step],
                floor.format(**timing),
                note=f"{spread}no ZooKeeper, no brokers",
                extra={"runs": figures, "in_process": True},
            )
        )
    return out


def measure(partitions: int, topics: int, runs: int) -> tuple[list[Measure], list[str]]:
    """Run the child for one size; its rows and a note on the request batching."""
    console.phase(f"the controller's own failover work in-process, {partitions:,} partitions")
    timing = run_child(partitions, topics, max(runs, MIN_RUNS))
    batching = timing["controller"]["batching"]
    total = sum(timing["controller"][s] for s, *_ in _ROWS)
    console.detail(
        ", ".join(f"{s} {timing['controller'][s]:.3f} s" for s, *_ in _ROWS)
        + f"; of which request batching {batching:.3f} s"
    )
    note = (
        f"controller in-process, {partitions:,} partitions: the three steps took "
        f"{total:.2f} s, of which {batching:.2f} s building and cutting the requests "
        "(RequestBatch.send; sending stubbed)"
    )
    return rows(timing), [note]
