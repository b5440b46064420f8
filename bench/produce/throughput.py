"""Produce throughput with acks=all and acks=1, against the gRPC floor of the same run.

    python -m bench.produce [--brokers 3] [--partitions 3] [--replication-factor 3]
                            [--duration 10] [--producers 4] [--batch 100]
                            [--value-bytes 100] [--quick] [--out DIR]

Runbook (the ensemble, the chroot, the teardown and the results are `bench.shared.runner`'s):

1. Start broker processes 1..n (DIR is their run directory: `logs/`, `events/`, `data/`)
   and wait until every broker is registered and every broker's Metadata lists all of
   them (the controller has seen them all).
2. Create the topic through ZooKeeper (`admin.topics.create_topic`, Kafka's assignment
   with a fixed seed) and wait until every state znode and every broker's Metadata show
   a leader and the full ISR for every partition.
3. Floor: after 500 warm-up calls, sequential Metadata RPCs (one topic) to broker 1 for
   `--floor-seconds`, then the same from `--producers` threads sharing the channel.
4. Produce: a few acks=all requests to every leader (the data path works and is warm),
   then `--producers` threads, each sending requests to the partitions' leaders in round
   robin for `--duration` seconds, first with acks=all, then with acks=1; a request
   carries a batch of `--batch` records of `--value-bytes` for every partition its broker
   leads (one with as many partitions as brokers, the default). Leaders come from
   Metadata; NOT_LEADER_OR_FOLLOWER and other retriable errors refresh them and retry
   (`bench.produce.producers`).
5. Report: Produce requests/s against the concurrent floor's RPC/s (each one RPC, as each
   floor call is), p50 latency against the
   sequential floor's, CPU per operation for the bench client and each broker, the
   events written during each produce phase; in `python -m bench all`, the brokers'
   flame graphs of a third acks=all phase of 5 s, not measured
   (`profiles/produce-acks_all-broker<id>.svg`).

Every RPC goes to 127.0.0.1. Every loop is bounded in count and time. Main thread (plus
the load's worker threads).
"""

from __future__ import annotations

import dataclasses
import math
import os
import random
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from admin import AdminError
from admin.topics import create_topic
from bench.produce.options import COMMAND, PRODUCE, ProduceOptions
from bench.produce.phases import Phase, Phases, errors, notes, summary
from bench.produce.producers import bench_client, by_leader, leaders_of, make_batch, produce_op
from bench.produce.rpc_load import Op, metadata_op, run_load, warm_up
from bench.shared import console
from bench.shared.cluster_ready import broker_port, wait_brokers_known, wait_full_isr
from bench.shared.profiling import Profiles, profile_lines
from bench.shared.report import Figure, Measure, Report
from bench.shared.runner import Benchmark, Cluster
from bench.shared.settings import Settings
from bench.shared.usage import CpuMeter, child_pids, events_between
from client import Client, ClientError
from harness.zk_endpoint import ZkEndpoint
from security.tls_files import client_identity
from zkdata.client import KafkaZkClient
from zkdata.errors import ZkDataError

ACKS_ALL = -1
#: acks=all requests sent to each leader, one by one, before the measured phases.
WARMUP_BATCHES_PER_PARTITION = 3
#: How long client threads may stay busy after a phase's end (RPC deadlines included).
GRACE_S = 30.0
ASSIGNMENT_SEED = 0
#: How the ZooKeeper JVMs are told apart from other children (their main class).
ZK_MAIN_CLASS = "QuorumPeerMain"

#: How long the unmeasured acks=all phase that is profiled lasts.
PROFILED_S = 5.0

ProfileHook = Callable[[str], AbstractContextManager[Profiles | None]]
"""Flame graphs of the brokers while a named phase runs (`bench.control.stage.Stage.profiled`)."""


def measure(
    settings: Settings[ProduceOptions], cluster: Cluster, profile: ProfileHook | None = None
) -> Report:
    """Start the brokers, create the topic, measure the floors and produce; the report.
    With `profile` (the suite's), a third acks=all phase of `PROFILED_S`, not measured,
    is profiled (py-spy's samplers took about 8% of the box's CPU in a measured phase) and
    its flame graphs are named in the notes."""
    options = settings.options
    fleet = cluster.fleet
    broker_ids = fleet.broker_ids
    console.phase(f"starting {settings.brokers} brokers; logs in {settings.out / 'logs'}")
    started = time.monotonic()
    fleet.start_all()
    fleet.wait_registered(broker_ids, timeout=settings.timeout_s)
    ports = {b: broker_port(fleet, b) for b in broker_ids}
    client = bench_client(ports, options.topic, client_identity(settings.tls_dir))
    cluster.cleanup.callback(client.close)
    wait_brokers_known(settings.timeout_s, fleet, client)
    console.detail(
        f"registered and known to every broker after {time.monotonic() - started:.1f} s; "
        "ports " + ", ".join(f"{b}: {p}" for b, p in ports.items())
    )
    assignment = _create_topic(settings, cluster.endpoint)
    wait_full_isr(options.topic, settings.timeout_s, fleet, client, cluster.endpoint, assignment)
    client.refresh()
    initial_leaders = leaders_of(client, options.topic)
    console.detail(
        "leaders: " + ", ".join(f"p{p} -> {b}" for p, b in sorted(initial_leaders.items()))
    )
    meter = CpuMeter(
        {
            "bench": [os.getpid()],
            **{f"broker{b}": [fleet.process(b).pid] for b in broker_ids},
            "zookeeper": child_pids(ZK_MAIN_CLASS),
        }
    )
    floor_seq, floor_conc = _floor(settings, cluster, client, meter, ports[broker_ids[0]])
    profiles: list[Profiles | None] = []
    groups = by_leader(initial_leaders)
    acks_all, acks_one = _produce(settings, cluster, client, meter, groups, profile, profiles)
    topic = {
        "name": options.topic,
        "assignment": {str(p): list(r) for p, r in sorted(assignment.items())},
        "leaders_at_start": {str(p): b for p, b in sorted(initial_leaders.items())},
        "leaders_at_end": {str(p): b for p, b in sorted(leaders_of(client, options.topic).items())},
        "partitions_per_request": [list(g) for g in groups],
        "leader_refreshes": client.refreshes,
        "floor_broker": broker_ids[0],
        "broker_ports": {str(b): p for b, p in ports.items()},
    }
    found = report(settings, Phases(floor_seq, floor_conc, acks_all, acks_one), topic)
    graphs = tuple(line for p in profiles for line in profile_lines(p))
    return dataclasses.replace(found, notes=found.notes + graphs) if graphs else found


def _create_topic(
    settings: Settings[ProduceOptions], endpoint: ZkEndpoint
) -> dict[int, tuple[int, ...]]:
    options = settings.options
    console.phase(
        f"creating topic {options.topic}: {settings.partitions} partitions, "
        f"RF {options.replication_factor}"
    )
    with endpoint.open() as zk:
        return create_topic(
            KafkaZkClient(zk),
            options.topic,
            settings.partitions,
            options.replication_factor,
            rng=random.Random(ASSIGNMENT_SEED),
        )


def _measure(
    key: str,
    title: str,
    op: Op,
    threads: int,
    duration_s: float,
    unit: str,
    cluster: Cluster,
    meter: CpuMeter,
    profiled: AbstractContextManager[Profiles | None] | None = None,
    profiles: list[Profiles | None] | None = None,
) -> Phase:
    """One timed load with its CPU and events (profiled by `profiled`, whose flame graphs
    go to `profiles`)."""
    console.phase(f"{title}: {threads} thread(s) for {duration_s:g} s")
    before = meter.sample()
    with profiled if profiled is not None else nullcontext() as found:
        load = run_load(key, op, threads, duration_s, GRACE_S, unit=unit)
    if profiles is not None:
        profiles.append(found)
    cpu = meter.usage(before, meter.sample())
    fleet = cluster.fleet
    fleet.check_alive()
    logs = {f"broker{b}": fleet.event_log(b) for b in fleet.broker_ids}
    events = events_between(logs, load.started_wall, load.ended_wall)
    console.detail(
        f"{load.ok:,} ok in {load.seconds:.2f} s = {load.rate:,.1f}/s, "
        f"p50 {load.p50_s * 1000:.2f} ms, p99 {load.p99_s * 1000:.2f} ms; "
        f"{load.failed} failed; box CPU busy {cpu.box_busy_fraction:.0%}"
    )
    return Phase(key, title, load, cpu, events)


def _floor(
    settings: Settings[ProduceOptions], cluster: Cluster, client: Client, meter: CpuMeter, port: int
) -> tuple[Phase, Phase]:
    options = settings.options
    broker_id = cluster.fleet.broker_ids[0]
    api = client.api(f"127.0.0.1:{port}")
    console.phase(f"floor: {options.warmup_calls} warm-up Metadata RPCs to broker {broker_id}")
    took = warm_up(api, options.topic, options.warmup_calls, settings.timeout_s)
    console.detail(f"{took:.2f} s")
    op = metadata_op(api, options.topic)
    return (
        _measure(
            "metadata_sequential",
            f"floor: Metadata RPC, 1 thread (broker {broker_id})",
            op,
            1,
            options.floor_s,
            "RPCs",
            cluster,
            meter,
        ),
        _measure(
            "metadata_concurrent",
            f"floor: Metadata RPC, {options.producers} threads",
            op,
            options.producers,
            options.floor_s,
            "RPCs",
            cluster,
            meter,
        ),
    )


def _produce(
    settings: Settings[ProduceOptions],
    cluster: Cluster,
    client: Client,
    meter: CpuMeter,
    groups: list[tuple[int, ...]],
    profile: ProfileHook | None,
    profiles: list[Profiles | None],
) -> tuple[Phase, Phase]:
    options = settings.options
    records = make_batch(options.batch, options.value_bytes)

    def op(acks: int) -> Op:
        return produce_op(client, options.topic, groups, records, acks, options.produce_timeout_ms)

    console.phase(
        f"warm-up: {WARMUP_BATCHES_PER_PARTITION} acks=all requests to each leader "
        f"(partitions per request: {', '.join(str(len(g)) for g in groups)})"
    )
    warm = op(ACKS_ALL)
    started = time.monotonic()
    for n in range(WARMUP_BATCHES_PER_PARTITION * len(groups)):
        result = warm(0, n)
        if not result.ok:
            raise RuntimeError(f"warm-up produce failed: {', '.join(result.errors)}")
    console.detail(f"{time.monotonic() - started:.2f} s")
    threads, duration_s = options.producers, options.duration_s
    measured = (
        _measure(
            "acks_all",
            "produce acks=all",
            op(ACKS_ALL),
            threads,
            duration_s,
            "records",
            cluster,
            meter,
        ),
        _measure("acks_1", "produce acks=1", op(1), threads, duration_s, "records", cluster, meter),
    )
    if profile is not None:  # samplers cost the brokers' CPU: never in a measured phase
        seconds = min(duration_s, PROFILED_S)
        _measure(
            "acks_all_profiled",
            "profile (not measured): produce acks=all",
            op(ACKS_ALL),
            threads,
            seconds,
            "records",
            cluster,
            meter,
            profile("acks_all"),
            profiles,
        )
    return measured


# -- the report ---------------------------------------------------------------------------


def report(settings: Settings[ProduceOptions], phases: Phases, topic: dict[str, Any]) -> Report:
    """Per acks setting, Produce requests/s against the concurrent floor's RPC/s and the
    p50 request latency against the sequential floor's p50; the rest in the notes and
    details."""
    options = settings.options
    cores = os.cpu_count() or 1
    seq, conc = phases.floor_sequential.load, phases.floor_concurrent.load
    rate_floor = (
        f"Metadata RPCs/s from {conc.threads} threads sharing one channel to broker "
        f"{topic['floor_broker']}, over {options.floor_s:g} s"
    )
    p50_floor = (
        f"p50 of sequential Metadata RPCs to broker {topic['floor_broker']}, "
        f"over {options.floor_s:g} s"
    )
    rows: list[Measure] = []
    for phase in phases.produce:
        load = phase.load
        mb = load.units_rate * options.value_bytes / 1e6
        extra = _extra(options, settings, load.units_rate, mb)
        rows.append(
            Measure(
                f"produce_{phase.key}",
                f"{phase.title} (requests/s)",
                settings.partitions,
                load.rate,
                conc.rate,
                rate_floor,
                Figure.PER_SECOND,
                unit="requests",
                floor_unit="RPC",
                note=f"{load.units_rate:,.0f} records/s, {mb:.2f} MB/s; {errors(load)}",
                extra={
                    **extra,
                    "p50_seconds": _seconds(load.p50_s),
                    "p99_seconds": _seconds(load.p99_s),
                    "ok": load.ok,
                    "failed": load.failed,
                },
            )
        )
        rows.append(
            Measure(
                f"produce_{phase.key}_p50",
                f"  p50 request latency ({phase.name})",
                settings.partitions,
                load.p50_s,
                seq.p50_s,
                p50_floor,
                note=f"p99 {load.p99_s * 1000:.1f} ms",
                extra=extra,
            )
        )
    per_request = "/".join(
        str(n) for n in sorted({len(g) for g in topic.get("partitions_per_request", [[0]])})
    )
    title = (
        f"produce on {settings.brokers} brokers: topic {options.topic}, "
        f"{settings.partitions} partitions, RF {options.replication_factor}; "
        f"{options.producers} producer threads, requests of {per_request} batch(es) of "
        f"{options.batch:,} x {options.value_bytes:,} B, {options.duration_s:g} s per acks "
        "setting"
    )
    details = {
        "topic": topic,
        "summary": summary(phases, options, cores),
        "floor": {
            "metadata_sequential": phases.floor_sequential.as_dict(),
            "metadata_concurrent": phases.floor_concurrent.as_dict(),
        },
        "produce": {p.key: p.as_dict() for p in phases.produce},
    }
    return Report(PRODUCE, title, tuple(rows), tuple(notes(phases, options, cores)), details)


def _extra(
    options: ProduceOptions,
    settings: Settings[ProduceOptions],
    records_per_s: float,
    mb_per_s: float,
) -> dict[str, Any]:
    """What a produce line needs beside its figure to be compared with another run's."""
    return {
        "brokers": settings.brokers,
        "replication_factor": options.replication_factor,
        "producers": options.producers,
        "batch": options.batch,
        "value_bytes": options.value_bytes,
        "records_per_second": round(records_per_s, 1),
        "mb_per_second": round(mb_per_s, 3),
    }


def _seconds(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 6)


BENCHMARK = Benchmark(
    COMMAND, measure, (RuntimeError, AdminError, ValueError, ZkDataError, ClientError)
)
