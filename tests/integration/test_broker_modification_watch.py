"""BrokerModifications on a real ensemble: broker 2 rewrites its live registration with
another endpoint (same session, same broker epoch, as Kafka's dynamic listener update
does); the controller sends UpdateMetadata and every broker's metadata cache shows the new
endpoint. The controller's Prometheus endpoint shows the deletion gauges, the broker
states and the BrokerChange timer under Kafka's names."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kazoo.client import KazooClient
from test_controller_core import SESSION_MS, Start, start_brokers

from domain import EndPoint
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc.wire import ClientApiClient
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment
from zkdata.znodes import BrokerIdZNode

pytestmark = pytest.mark.integration


def endpoints_known_to(proc: BrokerProcess, broker_id: int) -> tuple[EndPoint, ...]:
    """The endpoints of `broker_id` in `proc`'s metadata cache."""
    with ClientApiClient(f"127.0.0.1:{proc.port()}") as client:
        found = [b for b in client.metadata(()).brokers if b.id == broker_id]
    return found[0].endpoints if found else ()


def test_a_rewritten_registration_reaches_every_metadata_cache(
    brokers: Start, zk_client: KazooClient
) -> None:
    zk = KafkaZkClient(zk_client)
    procs = start_brokers(brokers, zk, [1, 2, 3])
    before = zk.get_broker(2)
    assert before is not None
    wait_until(
        lambda: all(endpoints_known_to(p, 2) == before.info.endpoints for p in procs.values()),
        15,
        "broker 2 never reached every metadata cache",
    )
    moved = (EndPoint("localhost", before.info.endpoint.port),)
    zk_client.set(
        BrokerIdZNode.path(2), BrokerIdZNode.encode(replace(before.info, endpoints=moved))
    )

    def everywhere() -> bool:
        return all(endpoints_known_to(p, 2) == moved for p in procs.values())

    wait_until(everywhere, 15, "the new endpoint did not reach every metadata cache")
    after = zk.get_broker(2)
    assert after is not None
    assert after.epoch == before.epoch
    controller = zk.get_controller_id()
    assert controller is not None
    (modified,) = [e for e in procs[controller].events() if e["kind"] == "broker_modified"]
    assert modified["broker_id"] == 2
    assert modified["endpoints"] == [moved[0].connection_string()]
    assert not [
        e for e in procs[controller].events() if e["kind"] == "broker_change" and 2 in e["bounced"]
    ]


def test_deletion_gauges_broker_state_and_the_broker_change_timer(
    brokers: Start, zk_client: KazooClient
) -> None:
    """A topic whose only replica is on a dead broker is queued for deletion and halted:
    one topic to delete, one ineligible, with its replica."""
    zk = KafkaZkClient(zk_client)
    procs = start_brokers(brokers, zk, [1])
    procs.update(start_brokers(brokers, zk, [2]))
    assert zk.get_controller_id() == 1
    scrape = procs[1].metrics
    wait_until(
        lambda: scrape()["kafka_server_KafkaServer_BrokerState"] == 4,
        10,
        "the controller's broker never reported RunningAsController",
    )
    assert procs[2].metrics()["kafka_server_KafkaServer_BrokerState"] == 3
    changes = scrape()["kafka_controller_ControllerStats_LeaderElectionRateAndTimeMs_count"]
    assert changes >= 1  # broker 2's arrival
    zk.create_topic("doomed", TopicAssignment({0: ReplicaAssignment((2,))}))
    wait_until(
        lambda: scrape()["kafka_controller_KafkaController_GlobalTopicCount"] == 1,
        15,
        "the topic never reached the controller",
    )
    procs[2].kill()
    wait_until(
        lambda: (
            scrape()["kafka_controller_ControllerStats_LeaderElectionRateAndTimeMs_count"] > changes
        ),
        SESSION_MS / 1000 + 10,
        "broker 2's death was not timed as a BrokerChange",
    )
    zk_client.create("/admin/delete_topics/doomed", b"", makepath=True)
    figures = wait_until(
        lambda: (
            (f := scrape())["kafka_controller_KafkaController_TopicsIneligibleToDeleteCount"] == 1
            and f
        ),
        15,
        "the halted deletion never showed",
    )
    assert figures["kafka_controller_KafkaController_TopicsToDeleteCount"] == 1
    assert figures["kafka_controller_KafkaController_ReplicasToDeleteCount"] == 1
    assert figures["kafka_controller_KafkaController_ReplicasIneligibleToDeleteCount"] == 1
