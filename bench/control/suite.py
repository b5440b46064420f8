"""`make bench`: every measure at scale in one run and one table.

    python -m bench all [--partitions 100000] [--no-produce] [--no-profile] [--quick]

Runbook (the ensemble, the teardown and the results are `bench.shared.runner`'s); each step
runs on a stage of its own (`bench.control.stage`: a fresh chroot and 3 broker processes):

1. For each size (1,000 and 10,000 partitions; `--partitions` adds one):
   `failover.measure_size` populates the chroot, measures the floors (pipelined reads,
   fenced multi writes, a gRPC round trip of a request naming every partition), runs
   the first election and a failover after kill -9 of the controller.
   Up to 10,000 partitions the kill runs three times (`--runs`), the killed broker
   started again and the leaderships spread again by a preferred election in between;
   the row is the median run. Then, on stages of their own, the two measures of the
   controller's structure at that size: the same failover with a new controller hosting
   no replicas (`spare`, against the same floors), and the controller's own steps of
   it in-process (`controller_work`, a child process without ZooKeeper or brokers).
2. On the 10,000-partition stage, with the killed broker restarted and in sync again:
   `broker_failure`, then `controlled_shutdown`, three runs each (`--runs`), the broker
   started again after each; the row is the median run.
3. `topic_creation`: 1,000 topics x 10 partitions on an empty stage.
4. `produce`: acks=all and acks=1 throughput on a 3-broker stage, RF 3.

Brokers run as local processes (`harness.brokers`), so the figures are the work, not
container overhead. Main thread.
"""

from __future__ import annotations

from bench.control import (
    broker_failure,
    controlled_shutdown,
    controller_work,
    failover,
    spare,
    topic_creation,
)
from bench.control.floor import Floors
from bench.control.layout import ClusterLayout
from bench.control.options import SUITE, SUITE_COMMAND, SuiteOptions
from bench.control.stage import Stage, open_stage
from bench.produce import throughput as produce
from bench.produce.options import PRODUCE
from bench.shared.profiling import LONG_MEASURE_PARTITIONS, LONG_RATE_HZ, RATE_HZ
from bench.shared.report import Measure, Report, median_of
from bench.shared.runner import Benchmark, Cluster
from bench.shared.settings import Settings
from harness.zk_endpoint import ZkEndpoint


def _stage(
    settings: Settings[SuiteOptions], cluster: Cluster, name: str, spare: int | None = None
) -> Stage:
    suite = settings.options
    stage = open_stage(
        name,
        ZkEndpoint.of(cluster.ensemble),
        settings.out,
        [*settings.broker_ids, *([] if spare is None else [spare])],
        settings.session_timeout_ms,
        settings.timeout_s,
        settings.out / "profiles" if suite.profile else None,
        settings.tls_dir,
    )
    cluster.cleanup.callback(stage.fleet.kill_all)
    return stage


def _scenarios(
    stage: Stage, layout: ClusterLayout, floors: Floors, runs: int
) -> tuple[list[Measure], list[str]]:
    """Broker failure `runs` times, then controlled shutdown `runs` times (the broker
    started again between runs): the median run of each, and the notes of each one's last
    run (its flame graphs: every run writes the same files)."""
    rows: list[Measure] = []
    notes: list[str] = []
    failures = [broker_failure.measure(stage, layout, floors) for _ in range(runs)]
    shutdowns = [
        controlled_shutdown.measure(stage, layout, floors, restart=i < runs - 1)
        for i in range(runs)
    ]
    for results in (failures, shutdowns):
        rows.append(median_of([row for ran, _ in results for row in ran]))
        notes.extend(results[-1][1])
    return rows, notes


def _structure(
    settings: Settings[SuiteOptions], cluster: Cluster, layout: ClusterLayout, floors: Floors
) -> tuple[list[Measure], list[str]]:
    """The two measures of the controller's structure at one size: the failover with a new
    controller hosting no replicas (`spare`, against the floors of the failover row), and
    the controller's own work in-process (`controller_work`)."""
    stage = _stage(settings, cluster, f"p{layout.partitions}-spare", spare.spare_id(layout))
    row, notes = spare.measure(stage, layout, floors)
    stage.fleet.kill_all()
    own, said = controller_work.measure(layout.partitions, layout.topics, settings.options.runs)
    return [row, *own], [*notes, *said]


def measure(settings: Settings[SuiteOptions], cluster: Cluster) -> Report:
    """Every measure (see the module docstring); one report."""
    suite = settings.options
    rows: list[Measure] = []
    notes: list[str] = []
    for size in suite.sizes:
        stage = _stage(settings, cluster, f"p{size}")
        layout = ClusterLayout(size, suite.topics, settings.brokers)
        result = failover.measure_size(
            stage,
            layout,
            suite.floor_repetitions,
            settle=size == suite.scenario_partitions,
            runs=suite.runs if size <= LONG_MEASURE_PARTITIONS else 1,
        )
        rows.extend(result.rows)
        notes.extend(result.notes)
        if size == suite.scenario_partitions:
            more, said = _scenarios(stage, layout, result.floors, suite.runs)
            rows.extend(more)
            notes.extend(said)
        stage.fleet.kill_all()
        more, said = _structure(settings, cluster, layout, result.floors)
        rows.extend(more)
        notes.extend(said)
    creation = ClusterLayout(
        suite.creation_topics * suite.creation_partitions, suite.creation_topics, settings.brokers
    )
    stage = _stage(settings, cluster, "topics")
    more, said = topic_creation.measure(
        stage, ZkEndpoint.of(cluster.ensemble), creation, suite.floor_repetitions
    )
    rows.extend(more)
    notes.extend(said)
    stage.fleet.kill_all()
    if suite.produce is not None:
        stage = _stage(settings, cluster, "produce")
        sub = settings.step(PRODUCE, suite.produce, partitions=3, out=stage.out)
        chroot = stage.endpoint.connect.removeprefix(cluster.ensemble.connect_string())
        report = produce.measure(
            sub,
            Cluster(cluster.ensemble, chroot, stage.endpoint, stage.fleet, cluster.cleanup),
            lambda name: stage.profiled(name, stage.fleet.broker_ids),
        )
        rows.extend(report.measures)
        notes.extend(report.notes)
    transport = "mutual TLS" if settings.tls_dir is not None else "plaintext gRPC"
    notes.insert(
        0,
        f"brokers: {settings.brokers} local processes (harness.brokers, {transport}), "
        "ZooKeeper: 3 local "
        f"JVMs, session timeout {settings.session_timeout_ms} ms; figures end when every "
        "live broker accepted the last control request of the change",
    )
    if suite.profile:
        notes.insert(
            1,
            f"profiled with py-spy --nonblocking at {RATE_HZ} Hz during each measure "
            f"({LONG_RATE_HZ} Hz above {LONG_MEASURE_PARTITIONS:,} partitions)",
        )
    return Report(
        SUITE,
        "the controller and the data plane at scale (figure vs floor of the same run)",
        tuple(rows),
        tuple(notes),
    )


BENCHMARK = Benchmark(SUITE_COMMAND, measure, failover.BENCHMARK.failures)
