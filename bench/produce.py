"""Produce throughput with acks=all and acks=1, against the gRPC floor of the same run.

    python -m bench.produce [--brokers 3] [--partitions 3] [--replication-factor 3]
                            [--duration 10] [--producers 4] [--batch 100]
                            [--value-bytes 100] [--quick] [--out DIR]

Runbook:

1. Setup: a 3-server ZooKeeper ensemble as local JVMs (`harness`) in a temporary
   directory under DIR, a fresh chroot, and broker processes 1..n (DIR is their run
   directory: `logs/`, `events/`, `data/`). Wait until every broker is registered and
   every broker's Metadata lists all of them (the controller has seen them all).
2. Create the topic through ZooKeeper (`testbed.topics.create_topic`, Kafka's assignment
   with a fixed seed) and wait until every state znode and every broker's Metadata show
   a leader and the full ISR for every partition.
3. Floor: after 500 warm-up calls, sequential Metadata RPCs (one topic) to broker 1 for
   `--floor-seconds`, then the same from `--producers` threads sharing the channel.
4. Produce: a few acks=all batches to every partition (the data path works and is warm),
   then `--producers` threads, each sending batches of `--batch` records of
   `--value-bytes` to the partitions' leaders in round robin for `--duration` seconds,
   first with acks=all, then with acks=1. Leaders come from Metadata; NOT_LEADER_OR_FOLLOWER
   and other retriable errors refresh them and retry (`bench.producers`).
5. Report: a table with ratios to the floor, CPU per operation for the bench client and
   each broker, the events written during each produce phase; DIR/bench.json.

Every RPC goes to 127.0.0.1. Every loop is bounded in count and time; a step that misses
its deadline ends the run with exit code 1 and says which. The ensemble is stopped and
every broker killed whatever happens; the partition data under DIR/data is deleted,
broker logs and events are kept. Main thread (plus the load's worker threads).
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench import console
from bench.cluster_ready import broker_port, check_alive, wait_brokers_known, wait_full_isr
from bench.entry import run_benchmark
from bench.fleet import BrokerFleet
from bench.machine import environment
from bench.produce_config import ProduceConfig, parse_produce_config
from bench.produce_report import Phase, ProduceBenchResult, render_table, write_json
from bench.producers import bench_client, leaders_of, make_batch, produce_op
from bench.rpc_load import Op, metadata_op, run_load, warm_up
from bench.usage import CpuMeter, box_busy_fraction, child_pids, events_between
from client import Client, ClientError
from harness.zk_ensemble import ZkEnsemble, new_chroot, open_client
from testbed.topics import TopicCommandError, create_topic
from zkdata.client import KafkaZkClient
from zkdata.errors import ZkDataError

ACKS_ALL = -1
#: acks=all batches sent to each partition, one by one, before the measured phases.
WARMUP_BATCHES_PER_PARTITION = 3
#: How long client threads may stay busy after a phase's end (RPC deadlines included).
GRACE_S = 30.0
ASSIGNMENT_SEED = 0
#: How the ZooKeeper JVMs are told apart from other children (their main class).
ZK_MAIN_CLASS = "QuorumPeerMain"
#: The box's CPU is sampled this long before the run; above `BUSY_WARNING` busy, a warning.
BUSY_SAMPLE_S = 1.0
BUSY_WARNING = 0.15


# -- the run ------------------------------------------------------------------------------


def run(config: ProduceConfig) -> ProduceBenchResult:
    """Set up, measure and tear down; returns every figure. Raises on a missed deadline."""
    load_at_start = os.getloadavg()
    config.out.mkdir(parents=True, exist_ok=True)
    zk_dir = Path(tempfile.mkdtemp(prefix="zk-", dir=config.out))
    ensemble = ZkEnsemble(zk_dir, size=3)
    fleet: BrokerFleet | None = None
    client: Client | None = None
    try:
        busy_before = box_busy_fraction(BUSY_SAMPLE_S)
        console.detail(
            "load average before the run: "
            + " ".join(f"{x:.2f}" for x in load_at_start)
            + f"; CPUs {busy_before:.0%} busy over {BUSY_SAMPLE_S:g} s"
        )
        if busy_before > BUSY_WARNING:
            console.warn(
                f"the machine is already {busy_before:.0%} busy: other work will skew the figures"
            )
        console.phase(f"starting a 3-server ZooKeeper ensemble in {zk_dir}")
        started = time.monotonic()
        ensemble.start()
        console.detail(f"serving after {time.monotonic() - started:.1f} s")
        chroot = new_chroot()
        with open_client(ensemble.connect_string()) as admin:
            admin.ensure_path(chroot)
        connect = ensemble.connect_string(chroot)

        broker_ids = list(range(1, config.brokers + 1))
        fleet = BrokerFleet(broker_ids, connect, config.out, config.session_timeout_ms)
        console.phase(f"starting {config.brokers} brokers; logs in {config.out / 'logs'}")
        started = time.monotonic()
        fleet.start_all()
        fleet.wait_registered(broker_ids, timeout=config.timeout_s)
        ports = {b: broker_port(fleet, b) for b in broker_ids}
        client = bench_client(ports, config.topic)
        wait_brokers_known(config.timeout_s, fleet, client)
        console.detail(
            f"registered and known to every broker after {time.monotonic() - started:.1f} s; "
            "ports " + ", ".join(f"{b}: {p}" for b, p in ports.items())
        )

        assignment = _create_topic(config, connect)
        wait_full_isr(config.topic, config.timeout_s, fleet, client, connect, assignment)
        client.refresh()
        initial_leaders = leaders_of(client, config.topic)
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
        floor_seq, floor_conc = _floor(config, fleet, client, meter, ports[broker_ids[0]])
        acks_all, acks_one = _produce(config, fleet, client, meter)
        return ProduceBenchResult(
            settings=_settings(config, chroot),
            environment={**environment(load_at_start), "cpu_busy_before_run": busy_before},
            topic={
                "name": config.topic,
                "assignment": {str(p): list(r) for p, r in sorted(assignment.items())},
                "leaders_at_start": {str(p): b for p, b in sorted(initial_leaders.items())},
                "leaders_at_end": {
                    str(p): b for p, b in sorted(leaders_of(client, config.topic).items())
                },
                "leader_refreshes": client.refreshes,
                "floor_broker": broker_ids[0],
                "broker_ports": {str(b): p for b, p in ports.items()},
            },
            floor_sequential=floor_seq,
            floor_concurrent=floor_conc,
            acks_all=acks_all,
            acks_one=acks_one,
        )
    finally:
        if client is not None:
            client.close()
        if fleet is not None:
            fleet.kill_all()
        ensemble.stop()
        for i in range(ensemble.size):  # keep the server logs, drop the data
            shutil.rmtree(ensemble.server_dir(i) / "data", ignore_errors=True)
        shutil.rmtree(config.out / "data", ignore_errors=True)  # the partition logs


def _create_topic(config: ProduceConfig, connect: str) -> dict[int, tuple[int, ...]]:
    console.phase(
        f"creating topic {config.topic}: {config.partitions} partitions, "
        f"RF {config.replication_factor}"
    )
    with open_client(connect) as zk:
        return create_topic(
            KafkaZkClient(zk),
            config.topic,
            config.partitions,
            config.replication_factor,
            rng=random.Random(ASSIGNMENT_SEED),
        )


def _measure(
    key: str,
    title: str,
    op: Op,
    threads: int,
    duration_s: float,
    unit: str,
    fleet: BrokerFleet,
    meter: CpuMeter,
) -> Phase:
    """One timed load with its CPU and events."""
    console.phase(f"{title}: {threads} thread(s) for {duration_s:g} s")
    before = meter.sample()
    load = run_load(key, op, threads, duration_s, GRACE_S, unit=unit)
    cpu = meter.usage(before, meter.sample())
    check_alive(fleet)
    logs = {f"broker{b}": fleet.event_log(b) for b in fleet.broker_ids}
    events = events_between(logs, load.started_wall, load.ended_wall)
    console.detail(
        f"{load.ok:,} ok in {load.seconds:.2f} s = {load.rate:,.1f}/s, "
        f"p50 {load.p50_s * 1000:.2f} ms, p99 {load.p99_s * 1000:.2f} ms; "
        f"{load.failed} failed; box CPU busy {cpu.box_busy_fraction:.0%}"
    )
    return Phase(key, title, load, cpu, events)


def _floor(
    config: ProduceConfig,
    fleet: BrokerFleet,
    client: Client,
    meter: CpuMeter,
    port: int,
) -> tuple[Phase, Phase]:
    broker_id = fleet.broker_ids[0]
    api = client.api(f"127.0.0.1:{port}")
    console.phase(f"floor: {config.warmup_calls} warm-up Metadata RPCs to broker {broker_id}")
    took = warm_up(api, config.topic, config.warmup_calls, config.timeout_s)
    console.detail(f"{took:.2f} s")
    op = metadata_op(api, config.topic)
    seq = _measure(
        "metadata_sequential",
        f"floor: Metadata RPC, 1 thread (broker {broker_id})",
        op,
        1,
        config.floor_s,
        "RPCs",
        fleet,
        meter,
    )
    conc = _measure(
        "metadata_concurrent",
        f"floor: Metadata RPC, {config.producers} threads",
        op,
        config.producers,
        config.floor_s,
        "RPCs",
        fleet,
        meter,
    )
    return seq, conc


def _produce(
    config: ProduceConfig,
    fleet: BrokerFleet,
    client: Client,
    meter: CpuMeter,
) -> tuple[Phase, Phase]:
    partitions = list(range(config.partitions))
    records = make_batch(config.batch, config.value_bytes)

    def op(acks: int) -> Op:
        return produce_op(
            client, config.topic, partitions, records, acks, config.produce_timeout_ms
        )

    console.phase(f"warm-up: {WARMUP_BATCHES_PER_PARTITION} acks=all batches to each partition")
    warm = op(ACKS_ALL)
    started = time.monotonic()
    for n in range(WARMUP_BATCHES_PER_PARTITION * len(partitions)):
        result = warm(0, n)
        if not result.ok:
            raise RuntimeError(f"warm-up produce failed: {', '.join(result.errors)}")
    console.detail(f"{time.monotonic() - started:.2f} s")
    phases = []
    for key, acks, title in (
        ("acks_all", ACKS_ALL, "produce acks=all"),
        ("acks_1", 1, "produce acks=1"),
    ):
        phases.append(
            _measure(
                key, title, op(acks), config.producers, config.duration_s, "records", fleet, meter
            )
        )
    return phases[0], phases[1]


def _settings(config: ProduceConfig, chroot: str) -> dict[str, Any]:
    settings = asdict(config)
    settings["out"] = str(config.out)
    settings["zk_chroot"] = chroot
    settings["zk_servers"] = 3
    settings["host"] = "127.0.0.1"
    return settings


# -- entry point --------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns the process exit code."""
    config = parse_produce_config(argv)
    return run_benchmark(
        lambda: run(config),
        config.out,
        (RuntimeError, TopicCommandError, ValueError, ZkDataError, ClientError),
        render_table,
        write_json,
    )


if __name__ == "__main__":
    sys.exit(main())
