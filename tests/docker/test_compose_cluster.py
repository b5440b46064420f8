"""The compose cluster as users run it: real images, real containers, real ensemble.

Setup: docker-compose.yml under a private project name (conftest). Validation goes
through the published ZooKeeper ports, the docker SDK and the bind-mounted event logs.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from admin.topics import create_topic
from chaos.client.workload_run import Progress, WorkloadConfig, judge, run_workload
from chaos.cluster.endpoints import env_of, settings_of
from client import Client
from domain import TopicPartition
from eventlog import event_log_path, read_events
from harness.compose import ComposeCluster
from harness.waiting import wait_until
from zkdata.client import KafkaZkClient
from zkdata.fourletter import server_mode

pytestmark = pytest.mark.docker


def test_compose_cluster_has_an_ensemble_three_brokers_and_one_controller(
    compose_cluster: ComposeCluster,
) -> None:
    """One ZooKeeper leader and two followers; brokers 1-3 registered with distinct broker
    epochs; exactly one broker logged its election at the current controller epoch."""
    assert compose_cluster.zk_tls is not None  # ZooKeeper listens on TLS only
    context = compose_cluster.zk_tls.ssl_context()
    modes = sorted(
        server_mode("127.0.0.1", int(hp.rsplit(":", 1)[1]), tls=context)
        for hp in compose_cluster.zk_connect.split(",")
    )
    assert modes == ["follower", "follower", "leader"]
    client = compose_cluster.zk()
    try:
        zk = KafkaZkClient(client)
        brokers = zk.get_all_brokers().brokers
        controller_id = zk.get_controller_id()
        epoch = zk.get_controller_epoch()
    finally:
        client.stop()
        client.close()
    assert sorted(brokers) == [1, 2, 3]
    assert len({b.epoch for b in brokers.values()}) == 3
    assert {b.info.endpoint.host for b in brokers.values()} == {"broker1", "broker2", "broker3"}
    assert controller_id in brokers
    assert epoch is not None
    elected = wait_until(
        lambda: [
            e
            for e in read_events(event_log_path(compose_cluster.run_dir, f"broker{controller_id}"))
            if e["kind"] == "controller_elected"
        ],
        10,
        "the controller's event log (bind-mounted under runs/) shows no election",
    )
    assert elected[-1]["controller_epoch"] == epoch.epoch


def test_the_brokers_run_the_fast_profile_with_the_tiers_session(
    compose_cluster: ComposeCluster,
) -> None:
    """The project chooses the `fast` profile explicitly and its own session timeout: each
    broker container's environment resolves, as the broker and a chaos run's config.json
    resolve it, to the tier's 3 s session and the fast profile's other timings."""
    for service in ("broker1", "broker2", "broker3"):
        found = settings_of(compose_cluster.container(service).attrs)
        assert found is not None, service
        profile, values = found
        assert profile == "fast"
        assert values["zk-session-timeout-ms"] == 3000  # tests/docker/conftest.py
        assert values["replica-lag-time-max-ms"] == 10_000
        assert values["registration-stale-wait-ms"] == 17_000


def test_the_brokers_run_the_inter_broker_protocol_compose_passes(
    compose_cluster: ComposeCluster,
) -> None:
    """`INTER_BROKER_PROTOCOL` reaches every broker: 2.6, leaders writing their ISR changes,
    unless the environment that started the project says otherwise."""
    expected = os.environ.get("INTER_BROKER_PROTOCOL") or "2.6"
    for service in ("broker1", "broker2", "broker3"):
        env = env_of(compose_cluster.container(service).attrs)
        assert env.get("INTER_BROKER_PROTOCOL") == expected, service


def test_docker_kill_of_the_controller_elects_another_with_a_higher_epoch(
    compose_cluster: ComposeCluster,
) -> None:
    """`docker kill` of the controller's container: another broker becomes controller with
    a higher epoch; restarted, the killed broker registers again with a larger broker epoch."""
    client = compose_cluster.zk()
    try:
        zk = KafkaZkClient(client)
        old = zk.get_controller_id()
        old_epoch = zk.get_controller_epoch()
        assert old is not None
        assert old_epoch is not None
        old_registration = zk.get_broker(old)
        assert old_registration is not None
        victim = compose_cluster.container(f"broker{old}")
        victim.kill()
        new = wait_until(
            lambda: (c := zk.get_controller_id()) is not None and c != old and c,
            30,
            "no new controller after the controller's container was killed",
        )
        new_epoch = zk.get_controller_epoch()
        assert new_epoch is not None
        assert new_epoch.epoch > old_epoch.epoch
        assert new in {1, 2, 3} - {old}
        victim.start()
        back = wait_until(
            lambda: (
                (b := zk.get_broker(old)) is not None and b.epoch != old_registration.epoch and b
            ),
            60,
            "the killed broker did not register again after `docker start`",
        )
        assert back.epoch > old_registration.epoch
        assert zk.get_controller_id() == new
    finally:
        client.stop()
        client.close()


def test_docker_stop_of_a_broker_is_a_controlled_shutdown(
    compose_cluster: ComposeCluster,
) -> None:
    """SIGTERM to the broker (PID 1 of its container): it asks the controller to move its
    leaderships (the controller answers with nothing left), exits 0 within the grace
    period, and its registration is gone without waiting for the session timeout."""
    client = compose_cluster.zk()
    try:
        zk = KafkaZkClient(client)
        wait_until(lambda: len(zk.get_all_brokers().brokers) == 3, 60, "cluster not whole")
        controller_id = zk.get_controller_id()
        target = next(i for i in (1, 2, 3) if i != controller_id)
        container = compose_cluster.container(f"broker{target}")
        started = time.monotonic()
        container.stop(timeout=30)
        took = time.monotonic() - started
        container.reload()
        assert container.attrs["State"]["ExitCode"] == 0
        assert zk.get_broker(target) is None
        assert took < 25  # within the grace period: no SIGKILL was needed
        log = event_log_path(compose_cluster.run_dir, f"broker{target}")
        attempts = [e for e in read_events(log) if e["kind"] == "controlled_shutdown_attempt"]
        assert attempts
        assert attempts[-1]["outcome"] == "done"
        container.start()
        wait_until(lambda: zk.get_broker(target), 60, "stopped broker did not come back")
    finally:
        client.stop()
        client.close()


def test_killing_the_broker_leading_most_partitions_leaves_every_partition_online(
    compose_cluster: ComposeCluster,
) -> None:
    """A topic of 30 partitions with RF 3; `docker kill` of the broker leading the most of
    them: every partition is led again by a live broker, with the dead one out of the ISR."""
    client = compose_cluster.zk()
    try:
        zk = KafkaZkClient(client)
        wait_until(lambda: len(zk.get_all_brokers().brokers) == 3, 60, "cluster not whole")
        create_topic(zk, "docker-thirty", 30, 3, rng=random.Random(30))
        partitions = [TopicPartition("docker-thirty", p) for p in range(30)]

        def leaders(live: set[int]) -> dict[int, int] | None:
            found = zk.get_partition_states(partitions).found
            led = {tp.partition: s.leader_and_isr.leader for tp, s in found.items()}
            return led if len(led) == 30 and set(led.values()) <= live else None

        before = wait_until(lambda: leaders({1, 2, 3}), 30, "topic did not come online")
        victim = Counter(before.values()).most_common(1)[0][0]
        container = compose_cluster.container(f"broker{victim}")
        container.kill()
        try:
            survivors = {1, 2, 3} - {victim}
            wait_until(
                lambda: leaders(survivors),
                30,
                "partitions did not move to live brokers after the kill",
            )

            def out_of_every_isr() -> bool:
                found = zk.get_partition_states(partitions).found.values()
                isrs = [s.leader_and_isr.isr for s in found]
                return all(victim not in isr and isr for isr in isrs)

            # the controller shrinks the followers' ISRs right after the new elections
            wait_until(out_of_every_isr, 30, "the killed broker stayed in some ISR")
        finally:
            container.start()
            wait_until(lambda: zk.get_broker(victim), 60, "killed broker did not come back")
    finally:
        client.stop()
        client.close()


def test_workload_through_a_broker_kill_loses_no_acknowledged_write(
    compose_cluster: ComposeCluster, tmp_path: Path
) -> None:
    """The workload runs from the host against the containers (advertised addresses mapped
    to the published ports); `docker kill` of the broker leading partition 0 after 100
    acknowledged sends; the history shows no acknowledged write lost."""
    client = compose_cluster.zk()
    try:
        zk = KafkaZkClient(client)
        wait_until(lambda: len(zk.get_all_brokers().brokers) == 3, 60, "cluster not whole")
        create_topic(zk, "docker-workload", 3, 3, rng=random.Random(9))
        tp0 = TopicPartition("docker-workload", 0)
        wait_until(lambda: zk.get_partition_states([tp0]).found.get(tp0), 30, "topic not created")
        addresses = compose_cluster.broker_addresses()
        cluster = Client(
            list(addresses.values()),
            topics=("docker-workload",),
            address_map=addresses,
            tls=compose_cluster.tls,
        )
        config = WorkloadConfig(
            topic="docker-workload",
            partitions=3,
            duration_s=90,
            producers=2,
            rate_per_s=40,
            progress_interval_s=0.5,
            max_sends=300,
        )
        enough = threading.Event()
        killed: list[int] = []

        def progress(p: Progress) -> None:
            if p.counts.get("send ok", 0) >= 100:
                enough.set()

        def killer() -> None:
            if enough.wait(90):
                victim = zk.get_partition_states([tp0]).found[tp0].leader_and_isr.leader
                compose_cluster.container(f"broker{victim}").kill()
                killed.append(victim)

        thread = threading.Thread(target=killer, name="test-killer")
        thread.start()
        try:
            result = run_workload(cluster, config, tmp_path / "history", None, progress)
        finally:
            enough.set()
            thread.join(30)
            cluster.close()
        assert killed, "no broker was killed"
        verdict = judge(result)
        assert verdict.ok, verdict.report()
        assert result.counts.get("send ok", 0) >= 500
        compose_cluster.container(f"broker{killed[0]}").start()
        wait_until(lambda: zk.get_broker(killed[0]), 60, "killed broker did not come back")
    finally:
        client.stop()
        client.close()


def test_the_cli_runs_inside_a_broker_container(compose_cluster: ComposeCluster) -> None:
    """The broker image carries every package the `testbed` CLI imports: `cluster` run in a
    container (as the README's walk-through runs `elect-leaders`) sees all three brokers."""
    result = compose_cluster.container("broker1").exec_run(
        ["/opt/venv/bin/python", "-m", "testbed", "cluster"]
    )
    output = result.output.decode()
    assert result.exit_code == 0, output
    assert "Controller" in output
    for host in ("broker1", "broker2", "broker3"):
        assert f"SSL://{host}:9092" in output
