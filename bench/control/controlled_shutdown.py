"""Controlled shutdown: SIGTERM to a broker leading a third of the partitions, timed
until its process exits, with no partition left offline.

Runbook, on a running, settled stage (`bench.control.stage`) whose floors were measured:

1. Preferred election of every partition, so that each broker leads its third again.
2. SIGTERM the non-controller broker leading the most partitions; it asks the controller
   to move its leaderships (ControlledShutdown) and exits once none is left (flame graphs
   of every broker meanwhile).
3. The figure is SIGTERM -> exit; then every partition must have a live leader. The
   broker is started again when another run follows (`restart`); after the last run it
   stays down.

Floor: fenced multi writes of as many state znodes as the controller wrote plus a gRPC
round trip of a request naming every partition. Main thread.
"""

from __future__ import annotations

import time

from bench.control.applied import applied_window
from bench.control.broker_failure import busiest_follower, change_measure
from bench.control.floor import Floors
from bench.control.layout import ClusterLayout
from bench.control.stage import Stage
from bench.shared import console
from bench.shared.profiling import profile_lines
from bench.shared.report import Measure

MEASURE = "controlled_shutdown"


def measure(
    stage: Stage, layout: ClusterLayout, floors: Floors, restart: bool = False
) -> tuple[list[Measure], list[str]]:
    """One controlled shutdown (see the module docstring): its row and notes; with
    `restart` the stopped broker is started again and the cluster settled afterwards."""
    stage.preferred_election()
    controller = stage.controller_id()
    victim, led = busiest_follower(stage, controller)
    live = {b for b in stage.fleet.broker_ids if b != victim}
    console.phase(f"{stage.name}: SIGTERM broker {victim} (leads {led:,} partitions)")
    with stage.profiled("controlled-shutdown", stage.fleet.broker_ids) as profiles:
        start_ms = int(time.time() * 1000)
        started = time.monotonic()
        code = stage.fleet.terminate(victim, stage.timeout_s)
        seconds = time.monotonic() - started
        bound = stage.wait_quiet()
    window = applied_window(stage.logs(), controller, None, start_ms, bound)
    offline = sum(1 for leader in stage.leaders().values() if leader not in live)
    console.detail(
        f"SIGTERM -> exit (code {code}) {seconds:.2f} s; {window.leaders_elected:,} leaders "
        f"elected, {window.isr_shrinks:,} ISRs shrunk; {offline} partitions without a live leader"
    )
    row = change_measure(
        MEASURE,
        f"controlled shutdown, {layout.partitions:,} partitions",
        layout.partitions,
        seconds,
        floors,
        window.states_written,
        note=f"{led:,} leaderships moved; {offline} offline after; exit code {code}",
        extra={"leaders_before": led, "offline_after": offline, "exit_code": code},
    )
    if restart:
        stage.restart(victim)
    return [row], list(profile_lines(profiles))
