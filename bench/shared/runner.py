"""The one runner of every benchmark.

Runbook of `run_benchmark(benchmark, settings)`:

1. Check that ZooKeeper can start (exit code 2 if not); SIGTERM and Ctrl-C unwind the
   run, and a second one, or a run still going two minutes later, kills its processes
   and ends at once (`bench.shared.stopping`).
2. Setup: sample how busy the box already is, start a 3-server ZooKeeper ensemble of
   local JVMs (`harness`) in a temporary directory under `settings.out`, secured as the
   compose cluster's is when the run has a TLS directory (ZooKeeper on TLS only, the
   brokers' and the bench's own clients presenting its certificates: every floor is
   measured over the connection the brokers use), make a fresh chroot, and prepare the
   broker fleet on it (`bench.shared.fleet`; started by the measures).
3. Measure: the benchmark's `measure(settings, cluster)` returns its `Report`.
4. Teardown, whatever happened: whatever the measures registered on `cluster.cleanup`
   (clients), every broker killed, the ensemble stopped, ZooKeeper's and the partitions'
   data deleted (server logs, broker logs and event logs are kept).
5. Results: the table on stdout, `settings.out/bench.json`, and one JSON line per measure
   in `settings.results_dir` (`latest.jsonl` and a dated copy).

A step that misses its deadline, or fails in a way the benchmark names, ends the run with
exit code 1 and says which. Main thread.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Generic

from bench.shared import console
from bench.shared.arguments import Command, parse_command
from bench.shared.fleet import BrokerDiedError, BrokerFleet
from bench.shared.machine import environment, machine, utc_now
from bench.shared.plot import plot_results
from bench.shared.report import (
    LATEST,
    Report,
    bench_json,
    read_results,
    render_table,
    result_lines,
    write_json,
    write_results,
)
from bench.shared.settings import OptionsT, Settings
from bench.shared.stopping import StopOnSignal
from bench.shared.usage import box_busy_fraction
from harness.zk_endpoint import ZkEndpoint
from harness.zk_ensemble import ZkEnsemble, missing_prerequisites, new_chroot
from security.zk_tls import ZkTls

EXIT_FAILED = 1
EXIT_USAGE = 2
ZK_SERVERS = 3
#: The box's CPU is sampled this long before the run; above `BUSY_WARNING` busy, a warning.
BUSY_SAMPLE_S = 1.0
BUSY_WARNING = 0.15
LATEST_PICTURE = "latest.png"
#: Set by the Makefile for one `make` run: the benchmarks of one `make bench` share it.
RUN_ID_VARIABLE = "RUN_ID"


@dataclass(frozen=True, slots=True)
class Cluster:
    """What the runner set up for a benchmark's measures: the running ensemble, the
    benchmark's chroot on it and its endpoint there (over TLS when the bench runs with a
    TLS directory), the (not yet started) broker fleet on that chroot, and the stack of
    clean-ups run at teardown (register clients there)."""

    ensemble: ZkEnsemble
    chroot: str
    endpoint: ZkEndpoint
    fleet: BrokerFleet
    cleanup: ExitStack


@dataclass(frozen=True, slots=True)
class Benchmark(Generic[OptionsT]):
    """A benchmark: its command line (name and options), its measures, and the errors that
    mean "the run failed" (reported in one line with exit code 1 rather than as a
    traceback)."""

    command: Command[OptionsT]
    measure: Callable[[Settings[OptionsT], Cluster], Report]
    failures: tuple[type[BaseException], ...] = ()

    @property
    def name(self) -> str:
        """The benchmark's name: `python -m bench <name>`."""
        return self.command.name


@dataclass(frozen=True, slots=True)
class _Outcome:
    report: Report
    settings: dict[str, Any]
    environment: dict[str, Any]


def main(benchmark: Benchmark[OptionsT], argv: Sequence[str] | None = None) -> int:
    """`python -m bench.<name>`: settings from `argv`, then the run; the exit code."""
    return run_benchmark(benchmark, parse_command(benchmark.command, argv))


def run_benchmark(benchmark: Benchmark[OptionsT], settings: Settings[OptionsT]) -> int:
    """Run one benchmark (see the module docstring); returns the process exit code
    (0, 1 failed, 2 cannot start)."""
    missing = missing_prerequisites()
    if missing:
        print("bench: cannot start ZooKeeper: " + "; ".join(missing), file=sys.stderr)
        return EXIT_USAGE
    StopOnSignal().install()
    failures: tuple[type[BaseException], ...] = (
        TimeoutError,
        BrokerDiedError,
        *benchmark.failures,
    )
    try:
        outcome = _measure(benchmark, settings)
    except failures as exc:
        what = "a step timed out" if isinstance(exc, TimeoutError) else "failed"
        print(f"bench: {what}: {exc}\n(logs in {settings.out})", file=sys.stderr)
        return EXIT_FAILED
    _write(outcome, settings)
    return 0


def _measure(benchmark: Benchmark[OptionsT], settings: Settings[OptionsT]) -> _Outcome:
    load_at_start = os.getloadavg()
    settings.out.mkdir(parents=True, exist_ok=True)
    zk_dir = Path(tempfile.mkdtemp(prefix="zk-", dir=settings.out))
    zk_tls = ZkTls(settings.tls_dir) if settings.tls_dir is not None else None
    ensemble = ZkEnsemble(zk_dir, size=ZK_SERVERS, tls=zk_tls)
    with ExitStack() as cleanup:
        cleanup.callback(_drop_data, ensemble, settings.out)
        cleanup.callback(ensemble.stop)
        busy_before = _say_load(load_at_start)
        console.phase(f"starting a {ZK_SERVERS}-server ZooKeeper ensemble in {zk_dir}")
        started = time.monotonic()
        ensemble.start()
        console.detail(
            f"serving after {time.monotonic() - started:.1f} s on ports "
            + ", ".join(str(p) for p in ensemble.client_ports)
        )
        chroot = new_chroot()
        with ZkEndpoint.of(ensemble).open() as admin:
            admin.ensure_path(chroot)
        endpoint = ZkEndpoint.of(ensemble, chroot)
        fleet = BrokerFleet(
            settings.broker_ids,
            endpoint,
            settings.out,
            settings.session_timeout_ms,
            settings.tls_dir,
        )
        cleanup.callback(fleet.kill_all)
        report = benchmark.measure(settings, Cluster(ensemble, chroot, endpoint, fleet, cleanup))
        run_settings = {**_plain(settings), "zk_chroot": chroot, "zk_servers": ZK_SERVERS}
    finished_at = utc_now()
    env = {**environment(load_at_start, finished_at), "cpu_busy_before_run": busy_before}
    return _Outcome(report, run_settings, env)


def _say_load(load_at_start: tuple[float, float, float]) -> float:
    """Print the load before the run and warn if the box is already busy; how busy."""
    busy = box_busy_fraction(BUSY_SAMPLE_S)
    console.detail(
        "load average before the run: "
        + " ".join(f"{x:.2f}" for x in load_at_start)
        + f"; CPUs {busy:.0%} busy over {BUSY_SAMPLE_S:g} s"
    )
    if busy > BUSY_WARNING:
        console.warn(f"the machine is already {busy:.0%} busy: other work will skew the figures")
    return busy


def _drop_data(ensemble: ZkEnsemble, out: Path) -> None:
    """Keep the server, broker and event logs; drop ZooKeeper's and the partitions' data."""
    for i in range(ensemble.size):
        shutil.rmtree(ensemble.server_dir(i) / "data", ignore_errors=True)
    shutil.rmtree(out / "data", ignore_errors=True)


def _plain(settings: Settings[Any]) -> dict[str, Any]:
    """The settings as plain values, the benchmark's options flattened in."""
    return {
        "benchmark": settings.benchmark,
        "partitions": settings.partitions,
        "brokers": settings.brokers,
        "session_timeout_ms": settings.session_timeout_ms,
        "timeout_s": settings.timeout_s,
        "out": str(settings.out),
        "results_dir": str(settings.results_dir),
        "tls": settings.tls_dir is not None,
        "zk_tls": settings.tls_dir is not None,
        **asdict(settings.options),
    }


def _write(outcome: _Outcome, settings: Settings[Any]) -> None:
    """The table, `bench.json` and the JSON lines."""
    publish(
        outcome.report, outcome.settings, outcome.environment, settings.out, settings.results_dir
    )


def publish(
    report: Report,
    settings: dict[str, Any],
    env: dict[str, Any],
    out_dir: Path,
    results_dir: Path,
) -> None:
    """Print the table, write `out_dir/bench.json` and the JSON lines in `results_dir`
    (`env` is `bench.shared.machine.environment`'s)."""
    print()
    print(render_table(report))
    out = out_dir / "bench.json"
    write_json(bench_json(report, settings, env), out)
    run_id = os.environ.get(RUN_ID_VARIABLE) or None
    run = {"git": env["git"], "finished_at_utc": env["finished_at_utc"], "run_id": run_id}
    lines = result_lines(report, machine(), run)
    stamp = env["finished_at_utc"].replace("-", "").replace(":", "")
    dated = write_results(results_dir, lines, stamp, run_id)
    print(f"\nwrote {out}\nwrote {dated} and {dated.parent / LATEST}")
    picture = plot_results(read_results(dated.parent / LATEST), dated.with_suffix(".png"))
    if picture is not None:
        shutil.copyfile(picture, picture.parent / LATEST_PICTURE)
        print(f"wrote {picture} and {picture.parent / LATEST_PICTURE}")
    profiles = out_dir / "profiles"
    if profiles.is_dir():
        kept = shutil.copytree(profiles, dated.with_suffix(".profiles"), dirs_exist_ok=True)
        print(f"flame graphs in {kept}")
