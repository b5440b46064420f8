"""The cluster a produce benchmark needs, made ready: deadline-bounded waits until every
broker knows every other and until each partition has a leader and its full ISR, both in
ZooKeeper and in every broker's Metadata.

Each wait polls every `POLL_S` on the calling thread (`harness.wait_until`) and
raises `TimeoutError` at its deadline, `BrokerDiedError` (`BrokerFleet.check_alive`) if a
broker process exits.
Transport errors while a broker starts serving count as "not yet". Main thread.
"""

from __future__ import annotations

import time

from bench.shared import console
from bench.shared.fleet import BrokerFleet
from client import Client, TransportError
from domain import TopicPartition
from harness.waiting import wait_until
from harness.zk_endpoint import ZkEndpoint
from rpc.errors import Errors
from zkdata.client import KafkaZkClient

POLL_S = 0.1


def broker_port(fleet: BrokerFleet, broker_id: int) -> int:
    """The gRPC port from a registered broker's health file."""
    port = fleet.process(broker_id).port()
    if port is None:
        raise RuntimeError(f"broker {broker_id} registered but its health file has no port")
    return port


def wait_brokers_known(timeout_s: float, fleet: BrokerFleet, client: Client) -> None:
    """Until every broker's Metadata lists every broker as live (UpdateMetadata from the
    controller arrived after the last registration)."""
    wanted = set(fleet.broker_ids)

    def known() -> bool:
        fleet.check_alive()
        try:
            return all(
                {b.id for b in client.api(a).metadata(()).brokers} == wanted
                for a in client.bootstrap
            )
        except TransportError:
            return False  # not serving yet

    wait_until(
        known,
        timeout=timeout_s,
        message=f"not every broker's Metadata lists brokers {sorted(wanted)}",
        interval=POLL_S,
    )


def wait_full_isr(
    topic: str,
    timeout_s: float,
    fleet: BrokerFleet,
    bench_client: Client,
    endpoint: ZkEndpoint,
    assignment: dict[int, tuple[int, ...]],
) -> None:
    """Until every state znode and every broker's Metadata show a leader and the full ISR
    for every partition."""
    tps = [TopicPartition(topic, p) for p in sorted(assignment)]
    started = time.monotonic()
    with endpoint.open() as zk:
        client = KafkaZkClient(zk)

        def in_zk() -> bool:
            states = client.get_partition_states(tps).found
            return all(
                tp in states
                and states[tp].leader_and_isr.leader >= 0
                and sorted(states[tp].leader_and_isr.isr) == sorted(assignment[tp.partition])
                for tp in tps
            )

        def in_metadata() -> bool:
            for address in bench_client.bootstrap:
                topics = bench_client.api(address).metadata((topic,)).topics
                if len(topics) != 1 or topics[0].error is not Errors.NONE:
                    return False
                parts = {p.partition: p for p in topics[0].partitions}
                for p, replicas in assignment.items():
                    if p not in parts or parts[p].leader < 0:
                        return False
                    if sorted(parts[p].isr) != sorted(replicas):
                        return False
            return True

        def ready() -> bool:
            fleet.check_alive()
            try:
                return in_zk() and in_metadata()
            except TransportError:
                return False

        wait_until(
            ready,
            timeout=timeout_s,
            message=f"partitions of {topic} did not all get a leader and the full ISR",
            interval=POLL_S,
        )
    console.detail(
        f"every partition led with its full ISR after {time.monotonic() - started:.1f} s"
    )
