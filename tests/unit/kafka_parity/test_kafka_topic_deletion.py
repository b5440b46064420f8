"""Every case of Kafka 2.8's `TopicDeletionManagerTest` as data: each case id is the Kafka
test method it mirrors. Kafka runs `TopicDeletionManager` over mock state machines that
only record states; here `TopicDeletionManager` runs over the real state machines, with
`FakePartitionZk`, `FakeDeletionZk` and a recording send, so the cases check the states
Kafka checks plus what the brokers were told. Kafka's mocks also count state-machine calls
per target state; those counts belong to its mocks, not to the outcome, and are not
checked.

Kafka's set-up: brokers 1, 2, 3 live; topics of two partitions with three replicas each,
assigned round-robin; both state machines started (every replica Online, every partition
Online and led by its first replica). Kafka's entry points map onto this manager's:
`enqueueTopicsForDeletion` is a deletion request (`on_deletion_requests`),
`completeReplicaDeletion` a StopReplica answered without error, `failReplicaDeletion`
after a broker failure `on_replicas_offline`, `resumeDeletionForTopics` the same name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pytest
from parity_rig import ParityRig, make_parity_rig

from controller.context import PartitionReplica
from controller.control_responses import StopReplicaResult
from controller.states import PartitionState, ReplicaState
from controller.testing.brokers import make_broker
from domain import EPOCH_DURING_DELETE, TopicPartition
from rpc import messages as m
from rpc.errors import Errors
from zkdata.model import ReplicaAssignment

R = ReplicaState


def started_cluster(topics: Sequence[str], live: Iterable[int] = (1, 2, 3)) -> ParityRig:
    """Kafka's `initContext` (brokers 1-3, round-robin, two partitions, three replicas),
    `live` registered, both state machines started and what they sent forgotten."""
    rig = make_parity_rig()
    rig.ctx.set_live_brokers(make_broker(b, epoch=1) for b in live)
    index = 0
    for topic in topics:
        partitions = {}
        for p in range(2):
            partitions[p] = ReplicaAssignment(tuple((1, 2, 3)[(i + index) % 3] for i in range(3)))
            index += 1
        rig.ctx.add_topic(topic, partitions)
        rig.deletion_zk.topics.add(topic)
    rig.rsm.startup()
    rig.psm.startup()
    rig.send.clear()
    return rig


def replicas_of(rig: ParityRig, topic: str, broker: int | None = None) -> set[PartitionReplica]:
    """The replicas of `topic` (on `broker` when given)."""
    return {
        r
        for r in rig.ctx.replicas_for_partitions(rig.ctx.partitions_of(topic))
        if broker is None or r.replica == broker
    }


def in_state(rig: ParityRig, replicas: Iterable[PartitionReplica], state: ReplicaState) -> bool:
    """Whether every one of `replicas` is in `state`."""
    return all(rig.ctx.replica_state(r) is state for r in replicas)


def complete(rig: ParityRig, replicas: Iterable[PartitionReplica]) -> None:
    """Kafka's `completeReplicaDeletion`: each broker answers its StopReplica without error."""
    by_broker: dict[int, list[TopicPartition]] = {}
    for r in replicas:
        by_broker.setdefault(r.replica, []).append(r.topic_partition)
    for broker_id, partitions in sorted(by_broker.items()):
        result = StopReplicaResult(Errors.NONE, {tp: Errors.NONE for tp in partitions})
        rig.deletion.on_stop_replica_response(broker_id, result)


def queues(rig: ParityRig) -> tuple[set[str], set[str], set[str]]:
    """Kafka's topicsToBeDeleted, topicsWithDeletionStarted, topicsIneligibleForDeletion."""
    topics = rig.ctx.all_topics() | set(rig.deletion.queued_topics())
    return (
        set(rig.deletion.queued_topics()),
        {t for t in topics if rig.ctx.is_topic_deletion_in_progress(t)},
        set(rig.deletion.ineligible_topics()),
    )


def gone(rig: ParityRig, topic: str, replicas: Iterable[PartitionReplica]) -> None:
    """The topic is deleted: no partition, no replica state, no znode."""
    assert rig.ctx.partitions_of(topic) == []
    assert in_state(rig, replicas, R.NON_EXISTENT)
    assert topic not in rig.deletion_zk.topics


@dataclass(frozen=True)
class Initialization:
    """Topics, those with a reassignment in flight, the deletion requests found at
    failover, and the queued and ineligible topics expected."""

    topics: tuple[str, ...]
    reassigning: tuple[str, ...]
    requested: tuple[str, ...]
    queued: set[str]
    ineligible: set[str]


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            # Kafka hands `init` the ineligible topics {bar, baz}. Here `init` finds them
            # as Kafka's controller computes that set: a replica on a dead broker or a
            # reassignment in flight. With three replicas on three brokers a dead broker
            # would halt every topic, so bar and baz are being reassigned.
            Initialization(
                ("foo", "bar", "baz"), ("bar", "baz"), ("foo", "bar"), {"foo", "bar"}, {"bar"}
            ),
            id="testInitialization",
        ),
    ],
)
def test_initialization(case: Initialization) -> None:
    """Failover queues the requested topics and halts the ineligible ones among them."""
    rig = started_cluster(case.topics)
    for topic in case.reassigning:
        tp = TopicPartition(topic, 0)
        replicas = rig.ctx.replicas(tp)
        rig.ctx.set_assignment(tp, ReplicaAssignment(replicas, replicas[-1:], ()))
    assert rig.deletion.enabled
    rig.deletion.init(case.requested)
    queued, _, ineligible = queues(rig)
    assert queued == case.queued
    assert ineligible == case.ineligible


# --- deletion scenarios: steps and the state after each ---------------------------------------


@dataclass(frozen=True)
class Expect:
    """The state after a step. `replicas` maps a group of replicas to the state each is
    in: "foo" is every replica of foo, "foo@2" those on broker 2, "foo-2" the others.
    `told` lists the topics whose partitions every live broker was just told are being
    deleted (UpdateMetadata with leader -2); `deleted` the topics entirely gone."""

    replicas: dict[str, ReplicaState]
    queued: set[str]
    started: set[str]
    ineligible: set[str]
    told: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()


#: An action and its argument (topics, a broker id, or a replica group), then what follows.
Step = tuple[str, str, Expect]

STARTED, DONE, HALTED, OFF = (
    R.DELETION_STARTED,
    R.DELETION_SUCCESSFUL,
    R.DELETION_INELIGIBLE,
    R.OFFLINE,
)
FOO = {"foo"}
BOTH = {"foo", "bar"}

BASIC: list[Step] = [
    ("enqueue", "foo bar", Expect({"foo": STARTED, "bar": STARTED}, BOTH, BOTH, set(),
                                  told=("foo", "bar"))),
    ("complete", "foo bar", Expect({}, set(), set(), set(), deleted=("foo", "bar"))),
]  # fmt: skip

BROKER_OFFLINE: list[Step] = [
    ("down", "2", Expect({"foo": R.ONLINE}, set(), set(), set())),
    ("offline", "foo@2", Expect({"foo@2": OFF, "foo-2": R.ONLINE}, set(), set(), set())),
    ("enqueue", "foo", Expect({"foo-2": STARTED, "foo@2": HALTED}, FOO, FOO, FOO, told=("foo",))),
    # halted: the failed replica goes back to Offline, nothing restarts
    ("complete", "foo-2", Expect({"foo-2": DONE, "foo@2": OFF}, FOO, FOO, FOO)),
    ("up", "2", Expect({"foo-2": DONE, "foo@2": OFF}, FOO, FOO, FOO)),
    ("resume", "foo", Expect({"foo-2": DONE, "foo@2": STARTED}, FOO, FOO, set(), told=("foo",))),
    ("complete", "foo@2", Expect({}, set(), set(), set(), deleted=("foo",))),
]  # fmt: skip

BROKER_FAILURE_AFTER_START: list[Step] = [
    ("enqueue", "foo", Expect({"foo": STARTED}, FOO, FOO, set(), told=("foo",))),
    ("down", "2", Expect({"foo": STARTED}, FOO, FOO, set())),
    ("fail", "foo@2", Expect({"foo@2": HALTED, "foo-2": STARTED}, FOO, FOO, FOO)),
    ("up", "2", Expect({"foo@2": HALTED, "foo-2": STARTED}, FOO, FOO, FOO)),
    # Kafka notes that the returning broker's replicas stay ineligible until the others end
    ("resume", "foo", Expect({"foo@2": HALTED, "foo-2": STARTED}, FOO, FOO, set())),
    # the last answer restarts the deletion, which tells the brokers again
    ("complete", "foo-2", Expect({"foo-2": DONE, "foo@2": STARTED}, FOO, FOO, set(),
                                 told=("foo",))),
]  # fmt: skip


def _group(groups: dict[str, set[PartitionReplica]], names: str) -> set[PartitionReplica]:
    return set().union(*(groups[name] for name in names.split()))


def _act(rig: ParityRig, groups: dict[str, set[PartitionReplica]], action: str, arg: str) -> None:
    match action:
        case "enqueue":
            rig.deletion.on_deletion_requests(arg.split())
        case "down":
            rig.ctx.remove_live_brokers([int(arg)])
        case "up":
            rig.ctx.add_live_brokers([make_broker(int(arg), epoch=2)])
        case "offline":
            rig.rsm.handle_state_changes(sorted(_group(groups, arg)), R.OFFLINE)
        case "fail":
            rig.deletion.on_replicas_offline(sorted(_group(groups, arg)))
        case "complete":
            complete(rig, _group(groups, arg))
        case "resume":
            rig.deletion.resume_deletion_for_topics(arg.split())
        case _:
            raise AssertionError(f"unknown step {action}")


def _told(rig: ParityRig) -> set[str]:
    """Topics whose partitions all went to every live broker with leader -2."""
    told: set[str] = set()
    live = {b.id for b in rig.ctx.live_brokers()}
    per_broker = {
        b: {s.topic_partition for s in r.partition_states if s.leader == EPOCH_DURING_DELETE}
        for b, r in rig.send.of_type(m.UpdateMetadataRequest)
    }
    for topic in {tp.topic for states in per_broker.values() for tp in states}:
        partitions = {TopicPartition(topic, p) for p in range(2)}
        if set(per_broker) >= live and all(partitions <= s for s in per_broker.values()):
            told.add(topic)
    return told


@pytest.mark.parametrize(
    ("topics", "steps"),
    [
        pytest.param(("foo", "bar"), BASIC, id="testBasicDeletion"),
        pytest.param(("foo", "bar"), BROKER_OFFLINE, id="testDeletionWithBrokerOffline"),
        pytest.param(
            ("foo", "bar"), BROKER_FAILURE_AFTER_START, id="testBrokerFailureAfterDeletionStarted"
        ),
    ],
)
def test_deletion(topics: tuple[str, ...], steps: list[Step]) -> None:
    """Each step, then the replica states, the three topic sets and what the brokers were
    told; a deleted topic has no partition, replica state or znode left. While a topic is
    being deleted its partitions are NonExistent."""
    rig = started_cluster(topics)
    rig.deletion.init([])
    groups: dict[str, set[PartitionReplica]] = {}
    for topic in topics:
        groups[topic] = replicas_of(rig, topic)
        groups[f"{topic}@2"] = replicas_of(rig, topic, broker=2)
        groups[f"{topic}-2"] = groups[topic] - groups[f"{topic}@2"]
    for action, arg, expect in steps:
        rig.send.clear()
        _act(rig, groups, action, arg)
        step = f"after {action} {arg}"
        for name, state in expect.replicas.items():
            got = {rig.ctx.replica_state(r) for r in groups[name]}
            assert got == {state}, f"{step}: {name} in {got}"
        assert queues(rig) == (expect.queued, expect.started, expect.ineligible), step
        assert _told(rig) == set(expect.told), step
        for topic in expect.queued & expect.started:
            states = {rig.ctx.partition_state(tp) for tp in rig.ctx.partitions_of(topic)}
            assert states == {PartitionState.NON_EXISTENT}, step
        for topic in expect.deleted:
            gone(rig, topic, groups[topic])
