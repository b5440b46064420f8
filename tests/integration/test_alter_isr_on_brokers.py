"""AlterIsr (inter.broker.protocol.version 2.7, KIP-497) on the real ensemble with broker
processes: leaders shrink and expand ISRs through the controller, which answers the
fencing errors as Kafka 2.8's `processAlterIsr` does; and an AlterIsr pending while the
controller moves is sent again and answered by the new controller.

Setup: brokers 1, 2 and 3 at `--inter-broker-protocol 2.7` with
`--replica-lag-time-max-ms 3000`; broker 1 starts first and is the controller.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from kazoo.client import KazooClient

from admin.topics import create_topic
from broker_node.alter_isr_manager import AlterIsrItem, AlterIsrManager, ControllerSender
from domain import LeaderAndIsr, TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import BrokerControlClient, ClientApiClient
from zkdata.client import KafkaZkClient

pytestmark = pytest.mark.integration

Start = Callable[..., BrokerProcess]
IBP_2_7 = ("--inter-broker-protocol", "2.7", "--replica-lag-time-max-ms", "3000")


def start_cluster(
    brokers: Start, zk: KafkaZkClient, session_ms: dict[int, int] | None = None
) -> dict[int, BrokerProcess]:
    """Brokers 1-3 at IBP 2.7, broker 1 the controller."""
    timeouts = session_ms or {}
    procs = {1: brokers(1, timeouts.get(1, 3000), extra_args=IBP_2_7)}
    wait_until(lambda: zk.get_controller_id() == 1, 20, procs[1].log_tail)
    procs.update({i: brokers(i, timeouts.get(i, 3000), extra_args=IBP_2_7) for i in (2, 3)})
    wait_until(
        lambda: all(p.port() for p in procs.values()) and len(zk.get_all_brokers().brokers) == 3,
        30,
        "brokers did not start",
    )
    return procs


def isrs(
    zk: KafkaZkClient, partitions: list[TopicPartition]
) -> dict[TopicPartition, tuple[int, ...]]:
    """The ISR of each partition's state znode."""
    found = zk.get_partition_states(partitions).found
    return {tp: tuple(sorted(s.leader_and_isr.isr)) for tp, s in found.items()}


def of_kind(proc: BrokerProcess, kind: str) -> list[dict[str, Any]]:
    """One broker's events of one kind."""
    return [e for e in proc.events() if e["kind"] == kind]


def test_leaders_change_isrs_through_the_controller(brokers: Start, zk_client: KazooClient) -> None:
    """Steps: topic `ai` (2 partitions, RF 3, led by brokers 1 and 2); broker 3 stops
    (SIGSTOP, its session outlives the test's wait) while a record is produced to each
    partition, and comes back.
    Validate: the leaders drop 3 from the ISR and take it back, each change an AlterIsr the
    controller wrote (`alter_isr_handled`), the leaders reporting `isr_changed` with the
    zkVersion the controller answered; no leader wrote `/isr_change_notification`."""
    zk = KafkaZkClient(zk_client)
    procs = start_cluster(brokers, zk, {3: 20_000})
    partitions = [TopicPartition("ai", p) for p in range(2)]
    create_topic(zk, "ai", assignment={0: [1, 2, 3], 1: [2, 1, 3]})
    full = dict.fromkeys(partitions, (1, 2, 3))
    wait_until(lambda: isrs(zk, partitions) == full, 20, "topic not fully in sync")
    for leader in (1, 2):
        wait_until(procs[leader].applied_leader_and_isr, 20, f"{leader}: no LeaderAndIsr")
    procs[3].pause()
    try:
        for leader, tp in ((1, partitions[0]), (2, partitions[1])):  # 3 falls behind
            with ClientApiClient(f"127.0.0.1:{procs[leader].port()}", timeout_s=20) as client:
                record = m.ProducedRecord(None, b"behind")
                reply = client.produce(
                    m.ProduceRequest.single(tp.topic, tp.partition, (record,), 1)
                ).only
                assert reply.error is Errors.NONE
        shrunk = dict.fromkeys(partitions, (1, 2))
        wait_until(lambda: isrs(zk, partitions) == shrunk, 20, "3 never left the ISRs")
    finally:
        procs[3].resume()
    wait_until(lambda: isrs(zk, partitions) == full, 30, "3 never rejoined the ISRs")
    handled = of_kind(procs[1], "alter_isr_handled")
    assert {e["broker_id"] for e in handled if e["written"]} == {1, 2}
    for leader, tp in ((1, partitions[0]), (2, partitions[1])):
        changes = [
            e for e in of_kind(procs[leader], "isr_changed") if e["partition"] == tp.partition
        ]
        assert [e["reason"] for e in changes] == ["shrink", "expand"]
        assert "by" not in changes[0]
    state = zk.get_partition_states(partitions).found[partitions[1]]
    assert state.leader_and_isr.zk_version == changes[-1]["zk_version"]
    assert not any(of_kind(p, "isr_change_propagated") for p in procs.values())


def test_the_controller_fences_alter_isr_as_kafka_does(
    brokers: Start, zk_client: KazooClient
) -> None:
    """AlterIsr sent as broker 2, the leader of `af-0`, straight to the controller:
    STALE_BROKER_EPOCH for an older registration, FENCED_LEADER_EPOCH for an older leader
    epoch, INVALID_UPDATE_VERSION for another zkVersion, the current state (nothing
    written) for what the znode already holds, NOT_CONTROLLER from another broker."""
    zk = KafkaZkClient(zk_client)
    procs = start_cluster(brokers, zk)
    tp = TopicPartition("af", 0)
    create_topic(zk, "af", assignment={0: [2, 3]})
    wait_until(lambda: isrs(zk, [tp]) == {tp: (2, 3)}, 20, "topic not in sync")
    state = zk.get_partition_states([tp]).found[tp].leader_and_isr
    registration = zk.get_broker(2)
    assert registration is not None

    def ask(
        broker_epoch: int = registration.epoch,
        leader_epoch: int = state.leader_epoch,
        isr: tuple[int, ...] = (2,),
        version: int = state.zk_version,
        to: int = 1,
    ) -> m.AlterIsrResponse:
        partition = m.AlterIsrPartition(tp, leader_epoch, isr, version)
        with BrokerControlClient(f"127.0.0.1:{procs[to].port()}") as client:
            return client.alter_isr(m.AlterIsrRequest(2, broker_epoch, (partition,)))

    assert ask(broker_epoch=registration.epoch - 1).error is Errors.STALE_BROKER_EPOCH
    assert ask(to=3).error is Errors.NOT_CONTROLLER
    fenced, stale, same = (
        ask(leader_epoch=state.leader_epoch - 1),
        ask(version=state.zk_version + 1),  # -1 would be "any version" to ZooKeeper
        ask(isr=state.isr),
    )
    assert fenced.partitions == (m.AlterIsrPartitionResult(tp, Errors.FENCED_LEADER_EPOCH),)
    assert stale.partitions == (m.AlterIsrPartitionResult(tp, Errors.INVALID_UPDATE_VERSION),)
    assert same.partitions == (
        m.AlterIsrPartitionResult(
            tp, Errors.NONE, 2, state.leader_epoch, state.isr, state.zk_version
        ),
    )
    after = zk.get_partition_states([tp]).found[tp].leader_and_isr
    assert after == state


def test_a_pending_alter_isr_is_sent_again_and_answered_by_the_new_controller(
    brokers: Start, zk_client: KazooClient
) -> None:
    """Steps: topic `am-0` on brokers 2 and 3 (the controller, broker 1, hosts none of it);
    the controller stops (SIGSTOP); an AlterIsr manager acting as broker 2 proposes ISR (2),
    its first request stuck at the stopped controller until its 2 s deadline; broker 1's
    session expires and another broker becomes controller.
    Validate: the manager sent the proposal again, the new controller wrote it (the state
    znode carries the new controller epoch) and answered NONE with the new zkVersion; the
    old controller wrote nothing."""
    zk = KafkaZkClient(zk_client)
    procs = start_cluster(brokers, zk)
    tp = TopicPartition("am", 0)
    create_topic(zk, "am", assignment={0: [2, 3]})
    wait_until(lambda: isrs(zk, [tp]) == {tp: (2, 3)}, 20, "topic not in sync")
    before = zk.get_partition_states([tp]).found[tp]
    old_epoch = zk.get_controller_epoch()
    registration = zk.get_broker(2)
    assert old_epoch is not None
    assert registration is not None

    asked: list[int | None] = []  # the controller each request went to

    def controller() -> str | None:
        controller_id = zk.get_controller_id()
        asked.append(controller_id)
        proc = procs.get(controller_id) if controller_id is not None else None
        return f"127.0.0.1:{proc.port()}" if proc is not None else None

    answers: list[m.AlterIsrPartitionResult] = []
    answered = threading.Event()

    def on_answer(result: m.AlterIsrPartitionResult) -> None:
        answers.append(result)
        answered.set()

    sender = ControllerSender(controller, timeout_s=2.0)
    manager = AlterIsrManager(2, lambda: registration.epoch, sender)
    procs[1].pause()
    try:
        wanted = LeaderAndIsr(
            2, before.leader_and_isr.leader_epoch, (2,), before.leader_and_isr.zk_version
        )
        assert manager.submit(AlterIsrItem(tp, wanted, on_answer))
        manager.start()
        wait_until(answered.is_set, 40, "the AlterIsr was never answered")
    finally:
        manager.stop()
        sender.close()
        procs[1].resume()
    new_controller = zk.get_controller_id()
    new_epoch = zk.get_controller_epoch()
    assert new_controller in (2, 3)
    assert asked[0] == 1
    assert asked[-1] == new_controller
    assert new_epoch is not None
    assert new_epoch.epoch > old_epoch.epoch
    after = zk.get_partition_states([tp]).found[tp]
    assert after.leader_and_isr.isr == (2,)
    assert after.controller_epoch == new_epoch.epoch
    assert answers == [
        m.AlterIsrPartitionResult(
            tp,
            Errors.NONE,
            2,
            before.leader_and_isr.leader_epoch,
            (2,),
            before.leader_and_isr.zk_version + 1,
        )
    ]
    handled = of_kind(procs[new_controller], "alter_isr_handled")
    assert [(e["broker_id"], e["written"]) for e in handled if e["broker_id"] == 2][-1] == (2, 1)
    wait_until(lambda: procs[1].events(), 10, "broker 1 wrote no events")
    assert not [e for e in of_kind(procs[1], "alter_isr_handled") if e["written"]]
