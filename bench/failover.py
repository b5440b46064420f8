"""Controller failover for N partitions, against floors measured in the same run.

    python -m bench.failover [--partitions 10000] [--topics 100] [--brokers 3]
                             [--session-timeout-ms 6000] [--rounds 2] [--out DIR]

Runbook:

1. Setup: a 3-server ZooKeeper ensemble as local JVMs (`harness`) in a temporary
   directory under DIR, and a fresh chroot on it.
2. Populate the chroot directly, in transactions of 1,000 creates: the topics with their
   assignments, every partition's state znode (leader = first replica, ISR = all
   replicas, epochs 0) and `/controller_epoch` = 0.
3. Floors: the best of 3 pipelined reloads of every topic and partition state on a
   fresh session; the best of 3 fenced, pipelined rewrites of every state.
4. Round 1: hold `/controller` from a bench session (as "broker 0"), start the brokers
   (DIR is their run directory: `logs/`, `events/`), and once all are registered, close
   that session; wait for the first `controller_failover_done`. Without the hold, the
   first broker up would win alone, lead every partition and shrink every ISR to itself
   until the others caught up again, so the round would measure ISR churn rather than a
   failover over a settled cluster.
5. Rounds 2..R: SIGKILL the controller, wait for the next `controller_failover_done`
   with a larger controller epoch, then restart the killed broker and let the cluster
   settle.
6. Validate and report: print a table with ratios to the floor, write DIR/bench.json.

The ensemble is always stopped and every broker killed, whatever happens; a step that
misses its deadline ends the run with exit code 1 and says which. Main thread.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from bench import console
from bench.config import BenchConfig, parse_config
from bench.entry import run_benchmark
from bench.fleet import BrokerDiedError, BrokerFleet, FailoverDone
from bench.floor import FloorError, ReadSample, WriteSample, read_once, write_floor
from bench.layout import ClusterLayout, znodes
from bench.machine import environment
from bench.populate import PopulateError, PopulateResult, populate
from bench.report import (
    AFTER_KILL,
    FIRST_ELECTION,
    BenchResult,
    RoundResult,
    render_table,
    write_json,
)
from bench.timeline import failover_timeline
from harness.zk_ensemble import ZkEnsemble, new_chroot, open_client
from zkdata.client import KafkaZkClient

#: The broker id the bench registers as controller while the brokers start, so that the
#: first election runs only once every broker is registered (else the first broker to
#: start would take over every partition and the ISRs would shrink to it).
PLACEHOLDER_ID = 0
#: How long the event logs must stay unchanged before the cluster counts as settled.
QUIET_S = 1.5


# -- the run ------------------------------------------------------------------------------


def run(config: BenchConfig) -> BenchResult:
    """Set up, measure and tear down; returns every figure. Raises on a missed deadline."""
    layout = config.layout
    load_at_start = os.getloadavg()
    config.out.mkdir(parents=True, exist_ok=True)
    zk_dir = Path(tempfile.mkdtemp(prefix="zk-", dir=config.out))
    ensemble = ZkEnsemble(zk_dir, size=3)
    fleet: BrokerFleet | None = None
    try:
        console.phase(f"starting a 3-server ZooKeeper ensemble in {zk_dir}")
        load = " ".join(f"{x:.2f}" for x in load_at_start)
        console.detail(f"load average before the run: {load}")
        started = time.monotonic()
        ensemble.start()
        console.detail(
            f"serving after {time.monotonic() - started:.1f} s on ports "
            + ", ".join(str(p) for p in ensemble.client_ports)
        )
        chroot = new_chroot()
        with open_client(ensemble.connect_string()) as admin:
            admin.ensure_path(chroot)
        connect = ensemble.connect_string(chroot)

        populated = _populate(connect, layout, chroot)
        reads = _read_floor(connect, config)
        writes = _write_floor(connect, config) if config.write_floor else []

        fleet = BrokerFleet(layout.broker_ids, connect, config.out, config.session_timeout_ms)
        rounds = _rounds(config, fleet, connect)
        return BenchResult(
            settings=_settings(config, chroot),
            environment=environment(load_at_start),
            populate=populated,
            reads=reads,
            writes=writes,
            rounds=rounds,
        )
    finally:
        if fleet is not None:
            fleet.kill_all()
        ensemble.stop()
        for i in range(ensemble.size):  # keep the server logs, drop the data
            shutil.rmtree(ensemble.server_dir(i) / "data", ignore_errors=True)


def _populate(connect: str, layout: ClusterLayout, chroot: str) -> PopulateResult:
    total = layout.znode_count()
    console.phase(
        f"populating {total:,} znodes under {chroot}: {layout.topics:,} topics, "
        f"{layout.partitions:,} partitions, RF {layout.replication_factor}"
    )
    with open_client(connect) as zk:
        result = populate(zk, znodes(layout), total)
    console.detail(
        f"{result.znodes:,} znodes in {result.transactions} transactions, "
        f"{result.seconds:.2f} s ({result.rate:,.0f}/s)"
    )
    return result


def _read_floor(connect: str, config: BenchConfig) -> list[ReadSample]:
    layout = config.layout
    console.phase(
        f"floor: pipelined read of {layout.topics + layout.partitions:,} znodes on a fresh "
        f"session, best of {config.floor_repetitions}"
    )
    samples = []
    for i in range(config.floor_repetitions):
        sample = read_once(connect, layout)
        samples.append(sample)
        console.detail(
            f"#{i + 1}: {sample.seconds:.2f} s (list {sample.list_seconds * 1000:.0f} ms, "
            f"topics {sample.topics_seconds:.2f} s, states {sample.states_seconds:.2f} s; "
            f"{sample.znodes / sample.seconds:,.0f} znodes/s)"
        )
    return samples


def _write_floor(connect: str, config: BenchConfig) -> list[WriteSample]:
    console.phase(
        f"floor: fenced write of {config.partitions:,} partition states in multis of 1,000, "
        f"best of {config.floor_repetitions}"
    )
    samples = write_floor(connect, config.layout, config.floor_repetitions)
    for i, sample in enumerate(samples):
        console.detail(
            f"#{i + 1}: {sample.seconds:.2f} s ({sample.writes / sample.seconds:,.0f} writes/s)"
        )
    return samples


def _rounds(config: BenchConfig, fleet: BrokerFleet, connect: str) -> list[RoundResult]:
    console.phase(
        f"round 1: starting {config.brokers} brokers (session timeout "
        f"{config.session_timeout_ms} ms) while the bench holds /controller; "
        f"logs in {config.out / 'logs'}"
    )
    with open_client(connect) as holder:
        held = KafkaZkClient(holder).register_controller_and_increment_epoch(PLACEHOLDER_ID)
        fleet.start_all()
        fleet.wait_registered(fleet.broker_ids, timeout=config.timeout_s)
        console.detail("every broker registered; releasing /controller")
    released_at = time.time()  # closing the session deleted the ephemeral /controller
    done = fleet.wait_failover_done(after_epoch=held.epoch, timeout=config.timeout_s)
    first = _round_result(1, FIRST_ELECTION, fleet, done)
    first = replace(first, release_to_done_s=done.ts_ms / 1000 - released_at)
    _say_round(first)
    rounds = [first]
    _settle(config, fleet, fleet.broker_ids)
    for number in range(2, config.rounds + 1):
        previous = rounds[-1]
        victim = _current_controller(connect)
        if victim != previous.controller_id:
            console.warn(
                f"the controller is broker {victim}, not {previous.controller_id} as last seen"
            )
        console.phase(f"round {number}: kill -9 the controller, broker {victim}")
        killed_at = fleet.kill(victim)
        done = fleet.wait_failover_done(
            after_epoch=previous.controller_epoch,
            timeout=config.timeout_s + config.session_timeout_ms / 1000,
        )
        result = _round_result(number, AFTER_KILL, fleet, done)
        elected_ts = result.timeline.elected_ts
        result = replace(
            result,
            killed_broker=victim,
            kill_to_done_s=done.ts_ms / 1000 - killed_at,
            kill_to_elected_s=None if elected_ts is None else elected_ts / 1000 - killed_at,
        )
        _say_round(result)
        rounds.append(result)
        if number < config.rounds:
            console.phase(f"restarting broker {victim}")
            fleet.start(victim)
            _settle(config, fleet, [victim])
    return rounds


def _round_result(number: int, kind: str, fleet: BrokerFleet, done: FailoverDone) -> RoundResult:
    logs = {broker_id: fleet.event_log(broker_id) for broker_id in fleet.broker_ids}
    timeline = failover_timeline(logs, done)
    return RoundResult(
        number=number,
        kind=kind,
        controller_id=done.broker_id,
        controller_epoch=done.controller_epoch,
        duration_s=done.duration_ms / 1000,
        timeline=timeline,
    )


def _say_round(result: RoundResult) -> None:
    """Progress lines for one round: the figures, the milestones, anything suspicious."""
    t = result.timeline
    console.detail(
        f"broker {result.controller_id} is controller (epoch {result.controller_epoch}), "
        f"failover {result.duration_s:.2f} s: {t.partitions:,} partitions, "
        f"{t.live_brokers} live brokers, {t.leaders_elected:,} leaders elected"
    )
    previous = 0.0
    for milestone in t.milestones:
        console.detail(
            f"  {milestone.offset_s:6.2f} s (+{milestone.offset_s - previous:.2f})  "
            f"{milestone.what}"
        )
        previous = milestone.offset_s
    if t.fenced_on_brokers:
        counts = ", ".join(f"broker {b}: {n:,}" for b, n in sorted(t.fenced_on_brokers.items()))
        console.detail(f"partition_fenced events written meanwhile: {counts}")
    if result.kill_to_done_s is not None:
        detected = (
            f"kill -> elected {result.kill_to_elected_s:.2f} s, "
            if result.kill_to_elected_s is not None
            else ""
        )
        console.detail(f"{detected}kill -> failover done {result.kill_to_done_s:.2f} s")
    if result.release_to_done_s is not None:
        console.detail(f"/controller released -> failover done {result.release_to_done_s:.2f} s")
    if t.offline_partitions:
        console.warn(
            f"round {result.number}: {t.offline_partitions:,} partitions still offline "
            "when the failover finished"
        )


def _settle(config: BenchConfig, fleet: BrokerFleet, broker_ids: list[int]) -> None:
    """Wait for `broker_ids` to register and for every event log to go quiet."""
    fleet.wait_registered(broker_ids, timeout=config.timeout_s + config.session_timeout_ms / 1000)
    took = fleet.wait_quiet(QUIET_S, timeout=config.timeout_s)
    console.detail(f"brokers {broker_ids} registered; cluster quiet after {took:.1f} s")


def _current_controller(connect: str) -> int:
    with open_client(connect) as zk:
        controller = KafkaZkClient(zk).get_controller_id()
    if controller is None:
        raise RuntimeError("no broker holds /controller before the kill")
    return controller


def _settings(config: BenchConfig, chroot: str) -> dict[str, Any]:
    settings = asdict(config)
    settings["out"] = str(config.out)
    settings["replication_factor"] = config.layout.replication_factor
    settings["zk_chroot"] = chroot
    settings["zk_servers"] = 3
    return settings


# -- entry point --------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns the process exit code."""
    config = parse_config(argv)
    return run_benchmark(
        lambda: run(config),
        config.out,
        (BrokerDiedError, PopulateError, FloorError, RuntimeError),
        render_table,
        write_json,
    )


if __name__ == "__main__":
    sys.exit(main())
