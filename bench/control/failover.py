"""Controller failover for N partitions, against floors measured in the same run.

    python -m bench.failover [--partitions 10000] [--topics 100] [--brokers 3]
                             [--session-timeout-ms 6000] [--rounds 2] [--out DIR]

Runbook (the ensemble, the chroot, the teardown and the results are `bench.shared.runner`'s):

1. Populate the chroot directly, in transactions of 1,000 creates: the topics with their
   assignments, every partition's state znode (leader = first replica, ISR = all
   replicas, epochs 0) and `/controller_epoch` = 0.
2. Floors: the best of 3 pipelined reloads of every topic and partition state on a
   fresh session; the best of 3 fenced, pipelined rewrites of every state.
3. Rounds (`bench.control.rounds`): the first election once every broker is registered, then one
   failover per kill -9 of the controller. DIR is the brokers' run directory (`logs/`,
   `events/`).
4. Report: each failover (and its loading part, election to the first request sent)
   against the read floor.

Main thread.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench.control.floor import (
    FloorError,
    Floors,
    ReadSample,
    WriteSample,
    read_once,
    rpc_floor,
    write_floor,
)
from bench.control.kill import failover_row, kill_controller
from bench.control.layout import ClusterLayout, znodes
from bench.control.options import FAILOVER, FAILOVER_COMMAND, FailoverOptions, cluster_layout
from bench.control.populate import PopulateError, PopulateResult, populate
from bench.control.rounds import (
    AFTER_KILL,
    FIRST_ELECTION,
    RoundPlan,
    RoundResult,
    run_rounds,
)
from bench.control.stage import Stage
from bench.shared import console
from bench.shared.cluster_ready import broker_port
from bench.shared.profiling import profile_lines
from bench.shared.report import Measure, Report, median_of, ratio
from bench.shared.runner import Benchmark, Cluster
from bench.shared.settings import Settings
from harness.zk_endpoint import ZkEndpoint


def measure(settings: Settings[FailoverOptions], cluster: Cluster) -> Report:
    """Populate, measure the floors, run the rounds; the report of every figure."""
    options = settings.options
    layout = cluster_layout(settings)
    populated = _populate(cluster.endpoint, layout, cluster.chroot)
    reads = _read_floor(cluster.endpoint, layout, options.floor_repetitions)
    writes = (
        _write_floor(cluster.endpoint, layout, options.floor_repetitions)
        if options.write_floor
        else []
    )
    plan = RoundPlan(options.rounds, settings.session_timeout_ms, settings.timeout_s)
    rounds = run_rounds(plan, cluster.fleet, cluster.endpoint)
    return report(settings, populated, reads, writes, rounds)


@dataclass(frozen=True, slots=True)
class SizeResult:
    """The failover measures of one cluster size, the floors measured for it, and notes."""

    rows: list[Measure]
    floors: Floors
    notes: list[str]
    first: RoundResult


def measure_size(
    stage: Stage, layout: ClusterLayout, repetitions: int, settle: bool = True, runs: int = 1
) -> SizeResult:
    """On a fresh stage: populate `layout`, measure the floors, start the brokers (first
    election), then kill -9 the controller, `runs` times (between runs the killed broker
    is started again and a preferred election gives each broker its third of the
    leaderships back); the row is the median run. Each failover is
    timed from the new controller's election until every live broker accepted the last
    request it caused. With `settle`, the broker killed last is restarted too (for
    measures that follow on the stage); without, the stage is left as the last failover
    left it (at 100,000 partitions two cores take minutes to bring a restarted broker's
    replicas back into sync, and no measure needs it)."""
    n = layout.partitions
    _populate(stage.endpoint, layout, stage.name)
    reads = _read_floor(stage.endpoint, layout, repetitions)
    writes = _write_floor(stage.endpoint, layout, repetitions)
    first = run_rounds(
        RoundPlan(1, stage.session_timeout_ms, stage.timeout_s), stage.fleet, stage.endpoint
    )[0]
    port = broker_port(stage.fleet, first.controller_id)
    floors = Floors(
        min(reads, key=lambda r: r.seconds),
        min(w.seconds for w in writes),
        writes[0].writes,
        rpc_floor(port, layout, repetitions, stage.tls_dir),
    )
    console.detail(
        f"floor: gRPC round trip of a {n:,}-partition LeaderAndIsr {floors.rpc_s * 1000:.1f} ms"
    )
    rows: list[Measure] = []
    notes: list[str] = []
    previous = first
    for run in range(1, runs + 1):
        if run > 1:  # each broker leads its third again, as before the first kill
            stage.preferred_election()
        of = f" (run {run} of {runs})" if runs > 1 else ""
        killed = kill_controller(stage, previous, n, of)
        if settle or run < runs:
            stage.restart(previous.controller_id)
        rows.append(
            failover_row("controller_failover", "failover after kill -9", n, killed, floors)
        )
        notes = list(profile_lines(killed.profiles))  # every run writes the same files
        previous = killed.result
    return SizeResult([median_of(rows)], floors, notes, first)


def _populate(endpoint: ZkEndpoint, layout: ClusterLayout, chroot: str) -> PopulateResult:
    total = layout.znode_count()
    console.phase(
        f"populating {total:,} znodes under {chroot}: {layout.topics:,} topics, "
        f"{layout.partitions:,} partitions, RF {layout.replication_factor}"
    )
    with endpoint.open() as zk:
        result = populate(zk, znodes(layout), total)
    console.detail(
        f"{result.znodes:,} znodes in {result.transactions} transactions, "
        f"{result.seconds:.2f} s ({result.rate:,.0f}/s)"
    )
    return result


def _read_floor(endpoint: ZkEndpoint, layout: ClusterLayout, repetitions: int) -> list[ReadSample]:
    console.phase(
        f"floor: pipelined read of {layout.topics + layout.partitions:,} znodes on a fresh "
        f"session, best of {repetitions}"
    )
    samples = []
    for i in range(repetitions):
        sample = read_once(endpoint, layout)
        samples.append(sample)
        console.detail(
            f"#{i + 1}: {sample.seconds:.2f} s (list {sample.list_seconds * 1000:.0f} ms, "
            f"topics {sample.topics_seconds:.2f} s, states {sample.states_seconds:.2f} s; "
            f"{sample.znodes / sample.seconds:,.0f} znodes/s)"
        )
    return samples


def _write_floor(
    endpoint: ZkEndpoint, layout: ClusterLayout, repetitions: int
) -> list[WriteSample]:
    console.phase(
        f"floor: fenced write of {layout.partitions:,} partition states in multis of 1,000, "
        f"best of {repetitions}"
    )
    samples = write_floor(endpoint, layout, repetitions)
    for i, sample in enumerate(samples):
        console.detail(
            f"#{i + 1}: {sample.seconds:.2f} s ({sample.writes / sample.seconds:,.0f} writes/s)"
        )
    return samples


# -- the report ---------------------------------------------------------------------------


def report(
    settings: Settings[FailoverOptions],
    populated: PopulateResult,
    reads: Sequence[ReadSample],
    writes: Sequence[WriteSample],
    rounds: Sequence[RoundResult],
) -> Report:
    """The rows (first election, failover after kill -9, and the loading part of each)
    against the best read, with the write floor and kill-to-done times in the notes."""
    read = min(reads, key=lambda s: s.seconds)
    write = min(writes, key=lambda s: s.seconds) if writes else None
    phrase = (
        f"best of {len(reads)} pipelined reloads of {read.znodes:,} znodes on a fresh "
        "session (decoded)"
    )
    rows: list[Measure] = []
    for kind, name, label in (
        (FIRST_ELECTION, "controller_first_election", "failover (first election)"),
        (AFTER_KILL, "controller_failover", "failover after kill -9 (new controller's work)"),
    ):
        of_kind = [r for r in rounds if r.kind == kind]
        if of_kind:
            rows.extend(_rows(settings, name, label, of_kind, read.seconds, phrase, write))
    layout = cluster_layout(settings)
    title = (
        f"controller failover, {layout.partitions:,} partitions in {layout.topics:,} topics, "
        f"{layout.brokers} brokers (ZooKeeper: 3 local servers)"
    )
    return Report(
        FAILOVER,
        title,
        tuple(rows),
        _notes(settings, rounds, read, write),
        _details(populated, reads, writes, rounds, layout),
    )


def _spread(values: Sequence[float]) -> str:
    """`median of n, min-max s` when there are several values, else nothing."""
    if len(values) < 2:
        return ""
    return f"median of {len(values)}, {min(values):.2f}-{max(values):.2f} s"


def _rows(
    settings: Settings[FailoverOptions],
    name: str,
    label: str,
    rounds: Sequence[RoundResult],
    floor_s: float,
    phrase: str,
    write: WriteSample | None,
) -> list[Measure]:
    work = [r.duration_s for r in rounds]
    moved = statistics.median(r.timeline.leaders_elected for r in rounds)
    kill_to_done = [r.kill_to_done_s for r in rounds if r.kill_to_done_s is not None]
    extra: dict[str, Any] = {
        "rounds": len(rounds),
        "leaders_moved": moved,
        "write_floor_seconds": None if write is None else round(write.seconds, 6),
        "kill_to_done_seconds": (
            round(statistics.median(kill_to_done), 6) if kill_to_done else None
        ),
    }
    note = "; ".join(x for x in (f"{moved:,.0f} leaders moved", _spread(work)) if x)
    rows = [
        Measure(
            name,
            label,
            settings.partitions,
            statistics.median(work),
            floor_s,
            phrase,
            note=note,
            extra=extra,
        )
    ]
    loads = [r.timeline.load_s for r in rounds if r.timeline.load_s is not None]
    if loads:
        rows.append(
            Measure(
                f"{name}_loading",
                "  of which loading (until the first request sent)",
                settings.partitions,
                statistics.median(loads),
                floor_s,
                phrase,
                extra={"rounds": len(loads)},
            )
        )
    return rows


def _notes(
    settings: Settings[FailoverOptions],
    rounds: Sequence[RoundResult],
    read: ReadSample,
    write: WriteSample | None,
) -> tuple[str, ...]:
    notes = ["failover = the new controller's own duration_ms"]
    kill_to_done = [r.kill_to_done_s for r in rounds if r.kill_to_done_s is not None]
    if kill_to_done:
        session_s = settings.session_timeout_ms / 1000
        spread = _spread(kill_to_done)
        notes.append(
            f"kill -9 -> failover done (incl. {session_s:g} s session): "
            f"{statistics.median(kill_to_done):.2f} s" + (f" ({spread})" if spread else "")
        )
    if write is not None:
        both = read.seconds + write.seconds
        notes.append(
            f"write floor: fenced write of {write.writes:,} states ({write.multis} multis) "
            f"{write.seconds:.2f} s"
        )
        if rounds:
            ratios = ", ".join(f"round {r.number} {_x(r.duration_s, both)}" for r in rounds)
            notes.append(f"vs read + write floor ({both:.2f} s): {ratios}")
    return tuple(notes)


def _x(value: float, floor: float) -> str:
    x = ratio(value, floor)
    return "-" if x is None else f"{x:.1f}x"


def _details(
    populated: PopulateResult,
    reads: Sequence[ReadSample],
    writes: Sequence[WriteSample],
    rounds: Sequence[RoundResult],
    layout: ClusterLayout,
) -> dict[str, Any]:
    """The figures behind the rows, for `bench.json`."""
    return {
        "replication_factor": layout.replication_factor,
        "populate": {
            "znodes": populated.znodes,
            "transactions": populated.transactions,
            "seconds": populated.seconds,
            "znodes_per_s": populated.rate,
        },
        "floor": {
            "read": [
                {
                    "seconds": s.seconds,
                    "list_s": s.list_seconds,
                    "topics_s": s.topics_seconds,
                    "states_s": s.states_seconds,
                    "znodes": s.znodes,
                }
                for s in reads
            ],
            "write": [
                {"seconds": s.seconds, "writes": s.writes, "multis": s.multis} for s in writes
            ],
        },
        "rounds": [r.as_dict() for r in rounds],
    }


BENCHMARK = Benchmark(FAILOVER_COMMAND, measure, (PopulateError, FloorError, RuntimeError))
