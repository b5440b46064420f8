"""A power loss of two of a partition's three replicas, on a compose project of its own
whose brokers' log directories are behind disk layers (`harness.disk_layers`), once per
flush policy: Kafka's default (never) and `LOG_FLUSH_INTERVAL_MESSAGES=1`.

Setup: the project comes up with the disk layers and the flush policy; a topic of one
partition on every broker, min.insync.replicas 2, broker 1 its preferred leader.

Steps and checks:
- `disk-volatile` on brokers 1 and 2 takes effect (their layers journal what is not
  fsynced); broker 3 is frozen (`pause`) until it leaves the ISR;
- 40 values are produced with acks=all, each acknowledged by brokers 1 and 2;
- `power-loss` on brokers 1 and 2: both are killed at once, their layers take back what
  was not fsynced, both start again; it is undone once both run, are registered, and
  their layers hold no rule;
- broker 3 thaws; once the partition is led again every value acknowledged is looked
  for in the leader's log. With the default policy the layers took back bytes and the
  log lost acknowledged values (Kafka's durability model allows it); with 1 the
  layers may have taken back only what was never acknowledged, and every acknowledged
  value is there;
- taking the project down leaves no layer mounted and no daemon running.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from admin.topics import create_topic
from chaos.cluster.handle import ClusterHandle
from chaos.faults.power import DiskVolatile, PowerLoss
from chaos.faults.process import Pause
from chaos.run.injector import Deadlines
from chaos.run.testing import in_effect
from client import Client
from client.errors import ClientError
from domain import TopicPartition
from harness.compose import ComposeCluster, missing_images, new_run_id, started_project
from harness.disk_layers import (
    LayerControl,
    LayerPaths,
    daemons,
    fuse_unavailable,
    host_layers,
    layer_root,
)
from harness.waiting import wait_until
from rpc import messages as m
from zkdata.client import KafkaZkClient

pytestmark = pytest.mark.docker

REPO_ROOT = Path(__file__).resolve().parents[2]
DEADLINES = Deadlines(took_effect_s=60.0, undone_s=120.0, poll_s=0.2)
TOPIC = "power-loss"
TP = TopicPartition(TOPIC, 0)
CUT = ("broker1", "broker2")
VALUES = 40


@pytest.fixture(scope="module", params=["never", "1"], ids=["default-flush", "flush-1"])
def power_cluster(request: pytest.FixtureRequest) -> Iterator[tuple[str, ComposeCluster]]:
    """A project of its own with disk layers and the flush policy; once it is down,
    nothing of its layers is left."""
    missing = fuse_unavailable()
    if missing:
        pytest.fail(f"the disk layers need FUSE here: {missing}", pytrace=False)
    if missing_images():
        pytest.fail(f"images missing: {missing_images()}; run `make images`", pytrace=False)
    flush: str = request.param
    env = {} if flush == "never" else {"LOG_FLUSH_INTERVAL_MESSAGES": flush}
    project = f"testbed-power-{flush}-{os.getpid()}"
    with started_project(
        REPO_ROOT, project, new_run_id("docker-power"), 3000, stable_ports=True, env=env,
        disk_layers=True,
    ) as cluster:  # fmt: skip
        zk = cluster.zk()
        try:
            kzk = KafkaZkClient(zk)
            create_topic(kzk, TOPIC, assignment={0: (1, 2, 3)}, config={"min.insync.replicas": "2"})
            wait_until(lambda: kzk.get_partition_states([TP]).found.get(TP), 30, "no topic")
        finally:
            zk.stop()
            zk.close()
        yield flush, cluster
    assert host_layers(project) == {}, "the project's layers are still mounted"
    assert daemons(f"{project}/") == {}, "the project's layer daemons still run"


def _isr(cluster: ComposeCluster) -> tuple[int, ...]:
    zk = cluster.zk()
    try:
        state = KafkaZkClient(zk).get_partition_states([TP]).found.get(TP)
        return () if state is None else tuple(state.leader_and_isr.isr)
    finally:
        zk.stop()
        zk.close()


def _read_all(client: Client) -> set[bytes]:
    """Every value of the partition, read from its leader up to its log end."""
    found: set[bytes] = set()
    offset = 0
    while True:
        fetched = client.fetch(TP, offset, timeout_ms=60_000)
        if not fetched.records:
            return found
        found.update(r.value for r in fetched.records if r.value is not None)
        offset = fetched.records[-1].offset + 1


def test_a_power_loss_of_two_replicas_loses_only_what_the_flush_policy_allows(
    power_cluster: tuple[str, ComposeCluster], tmp_path: Path
) -> None:
    flush, cluster = power_cluster
    addresses = cluster.broker_addresses()
    client = Client(
        list(addresses.values()), topics=(TOPIC,), address_map=addresses, tls=cluster.tls
    )
    acknowledged: list[bytes] = []
    with ClusterHandle.for_compose(cluster) as handle:
        wait_until(lambda: _isr(cluster) == (1, 2, 3), 60, "the ISR is not whole")
        with (
            in_effect(handle, tmp_path / "volatile", DiskVolatile(CUT), DEADLINES),
            in_effect(handle, tmp_path / "pause", Pause(("broker3",)), DEADLINES),
        ):
            wait_until(lambda: 3 not in _isr(cluster), 60, "broker3 stayed in the ISR")
            for n in range(VALUES):
                value = b"v%d" % n
                client.produce(TOPIC, 0, [m.ProducedRecord(None, value)], acks=-1)
                acknowledged.append(value)
            with in_effect(handle, tmp_path / "power", PowerLoss(CUT), DEADLINES) as cut:
                lost = cut.check.detail
        wait_until(lambda: handle.broker_registered(3), 90, "broker3 did not register again")

        def readable() -> tuple[set[bytes]] | None:
            try:
                return (_read_all(client),)  # a tuple: an empty log is an answer too
            except ClientError:
                client.refresh_soon()
                return None

        (kept,) = wait_until(readable, 120, "the partition was not readable again")
        for service in CUT:
            control = LayerControl(LayerPaths(layer_root(), handle.project, service).socket)
            assert control.stats().rules.transparent, f"{service}'s layer kept its rules"
    client.close()
    missing = [v for v in acknowledged if v not in kept]
    print(f"flush {flush}: {lost}; {len(missing)} of {VALUES} acknowledged values lost")
    if flush == "never":
        assert "took back 0 bytes" not in lost, lost
        assert missing, "the power loss lost no acknowledged write under the default policy"
    else:
        assert missing == [], f"flush.messages=1 lost acknowledged values: {missing}"
