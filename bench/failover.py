"""Controller failover for N partitions, against floors measured in the same run.

    python -m bench.failover [--partitions 10000] [--topics 100] [--brokers 3]
                             [--session-timeout-ms 6000] [--rounds 2] [--out DIR]

Runbook:

1. Setup: a 3-server ZooKeeper ensemble as local JVMs (`tests/support`) in a temporary
   directory under DIR, and a fresh chroot on it.
2. Populate the chroot directly, in transactions of 1,000 creates: the topics with their
   assignments, every partition's state znode (leader = first replica, ISR = all
   replicas, epochs 0) and `/controller_epoch` = 0.
3. Floors: the best of 3 pipelined reloads of every topic and partition state on a
   fresh session; the best of 3 fenced, pipelined rewrites of every state.
4. Round 1: start the brokers (DIR is their run directory: `logs/`, `events/`) and wait
   for the first `controller_failover_done`.
5. Rounds 2..R: SIGKILL the controller, wait for the next `controller_failover_done`
   with a larger controller epoch, then restart the killed broker and let the cluster
   settle.
6. Validate and report: print a table with ratios to the floor, write DIR/bench.json.

The ensemble is always stopped and every broker killed, whatever happens; a step that
misses its deadline ends the run with exit code 1 and says which. Main thread.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from types import FrameType
from typing import Any

from bench import console
from bench.fleet import BrokerDiedError, BrokerFleet, FailoverDone, failover_timeline
from bench.floor import FloorError, ReadSample, WriteSample, read_once, write_floor
from bench.layout import ClusterLayout, znodes
from bench.populate import PopulateError, PopulateResult, populate
from bench.report import (
    AFTER_KILL,
    FIRST_ELECTION,
    BenchResult,
    RoundResult,
    render_table,
    write_json,
)
from support.zk_ensemble import ZkEnsemble, missing_prerequisites, new_chroot, open_client
from zkdata.client import KafkaZkClient

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The ensemble's session-timeout bounds (`minSessionTimeout`/`maxSessionTimeout`).
SESSION_TIMEOUT_RANGE_MS = (1000, 60000)
#: How long the event logs must stay unchanged before the cluster counts as settled.
QUIET_S = 1.5
EXIT_FAILED = 1
EXIT_USAGE = 2


@dataclass(frozen=True, slots=True)
class BenchConfig:
    """One run's settings, built from the command line."""

    partitions: int
    topics: int
    brokers: int
    session_timeout_ms: int
    rounds: int
    out: Path
    floor_repetitions: int = 3
    write_floor: bool = True
    timeout_s: float = 180.0

    @property
    def layout(self) -> ClusterLayout:
        """The cluster to load into ZooKeeper."""
        return ClusterLayout(self.partitions, self.topics, self.brokers)


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.failover",
        description="Time controller failover for many partitions against a floor measured "
        "on the same ZooKeeper ensemble in the same run.",
    )
    parser.add_argument("--partitions", type=int, default=10_000, help="default 10000")
    parser.add_argument("--topics", type=int, default=100, help="default 100")
    parser.add_argument("--brokers", type=int, default=3, help="default 3")
    parser.add_argument(
        "--session-timeout-ms", type=int, default=6000, help="brokers' ZooKeeper session timeout"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="failovers to measure: the first election, then one per kill -9 (default 2)",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="output directory (default runs/bench-<UTC time>)"
    )
    parser.add_argument(
        "--floor-repetitions", type=int, default=3, help="floor measurements, best kept"
    )
    parser.add_argument("--no-write-floor", action="store_true", help="skip the fenced-write floor")
    parser.add_argument(
        "--timeout",
        type=float,
        default=180.0,
        help="deadline in seconds for each wait (default 180)",
    )
    return parser


def parse_config(argv: Sequence[str] | None) -> BenchConfig:
    """Build and validate the settings; bad values exit with code 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    out = args.out or REPO_ROOT / "runs" / time.strftime("bench-%Y%m%d-%H%M%S", time.gmtime())
    low, high = SESSION_TIMEOUT_RANGE_MS
    if not low <= args.session_timeout_ms <= high:
        parser.error(f"--session-timeout-ms must be within {low}..{high}")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.rounds > 1 and args.brokers < 2:
        parser.error("rounds after a kill need at least 2 brokers")
    if args.floor_repetitions < 1:
        parser.error("--floor-repetitions must be at least 1")
    if args.timeout <= 0:
        parser.error("--timeout must be positive")
    config = BenchConfig(
        partitions=args.partitions,
        topics=args.topics,
        brokers=args.brokers,
        session_timeout_ms=args.session_timeout_ms,
        rounds=args.rounds,
        out=out.resolve(),  # the ZooKeeper JVMs run in their own directories
        floor_repetitions=args.floor_repetitions,
        write_floor=not args.no_write_floor,
        timeout_s=args.timeout,
    )
    try:
        _ = config.layout
    except ValueError as exc:
        parser.error(str(exc))
    return config


# -- the run ------------------------------------------------------------------------------


def run(config: BenchConfig) -> BenchResult:
    """Set up, measure and tear down; returns every figure. Raises on a missed deadline."""
    layout = config.layout
    config.out.mkdir(parents=True, exist_ok=True)
    zk_dir = Path(tempfile.mkdtemp(prefix="zk-", dir=config.out))
    ensemble = ZkEnsemble(zk_dir, size=3)
    fleet: BrokerFleet | None = None
    try:
        console.phase(f"starting a 3-server ZooKeeper ensemble in {zk_dir}")
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
            environment=_environment(),
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
        f"{config.session_timeout_ms} ms); logs in {config.out / 'logs'}"
    )
    started_at = time.time()
    fleet.start_all()
    done = fleet.wait_failover_done(after_epoch=0, timeout=config.timeout_s)
    first = _round_result(1, FIRST_ELECTION, fleet, done)
    first = replace(first, start_to_done_s=done.ts_ms / 1000 - started_at)
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
        elected = result.timeline.elected_ts
        result = replace(
            result,
            killed_broker=victim,
            kill_to_done_s=done.ts_ms / 1000 - killed_at,
            kill_to_elected_s=None if elected is None else elected / 1000 - killed_at,
        )
        _say_round(result)
        rounds.append(result)
        if number < config.rounds:
            console.phase(f"restarting broker {victim}")
            fleet.start(victim)
            _settle(config, fleet, [victim])
    return rounds


def _round_result(number: int, kind: str, fleet: BrokerFleet, done: FailoverDone) -> RoundResult:
    timeline = failover_timeline(fleet.event_log(done.broker_id), done)
    return RoundResult(
        number=number,
        kind=kind,
        controller_id=done.broker_id,
        controller_epoch=done.controller_epoch,
        duration_s=done.duration_ms / 1000,
        timeline=timeline,
    )


def _say_round(result: RoundResult) -> None:
    t = result.timeline
    console.detail(
        f"broker {result.controller_id} is controller (epoch {result.controller_epoch}), "
        f"failover {result.duration_s:.2f} s: {t.partitions:,} partitions, "
        f"{t.live_brokers} live brokers, {t.leaders_elected:,} leaders elected"
    )
    phases = ", ".join(
        f"{name.replace('_', ' ')} {value:.2f} s"
        for name, value in t.phases().items()
        if value is not None
    )
    if phases:
        console.detail(phases)
    if result.kill_to_done_s is not None:
        detected = (
            f"kill -> elected {result.kill_to_elected_s:.2f} s, "
            if result.kill_to_elected_s is not None
            else ""
        )
        console.detail(f"{detected}kill -> failover done {result.kill_to_done_s:.2f} s")
    if result.start_to_done_s is not None:
        console.detail(f"brokers launched -> failover done {result.start_to_done_s:.2f} s")


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


def _environment() -> dict[str, Any]:
    try:
        revision = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        revision = ""
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "git": revision or None,
        "finished_at_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


# -- entry point --------------------------------------------------------------------------


def _raise_system_exit(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM: unwind like Ctrl-C so that the ensemble and brokers are stopped."""
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns the process exit code."""
    config = parse_config(argv)
    missing = missing_prerequisites()
    if missing:
        print("bench: cannot start ZooKeeper: " + "; ".join(missing), file=sys.stderr)
        return EXIT_USAGE
    signal.signal(signal.SIGTERM, _raise_system_exit)
    try:
        result = run(config)
    except TimeoutError as exc:
        print(f"bench: a step timed out: {exc}\n(logs in {config.out})", file=sys.stderr)
        return EXIT_FAILED
    except (BrokerDiedError, PopulateError, FloorError, RuntimeError) as exc:
        print(f"bench: failed: {exc}\n(logs in {config.out})", file=sys.stderr)
        return EXIT_FAILED
    print()
    print(render_table(result))
    out = config.out / "bench.json"
    write_json(result, out)
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
