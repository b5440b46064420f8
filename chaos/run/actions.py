"""The admin operations a schedule performs besides faults
(`chaos.generator.action_kinds.ACTION_KINDS`).

`reassign(topic, shift)`: move every replica on the i-th of the sorted live broker ids to
the (i + shift)-th, through `/admin/reassign_partitions`, as
`kafka-reassign-partitions.sh --execute --zookeeper` would. `shifted_assignment` is the
pure decision; `perform` does the ZooKeeper write on the caller's thread.

`create-topic(topic, partitions, replication_factor)`: create a topic beside the
workload's, as `kafka-topics.sh --create --zookeeper` would. `add-partitions(topic,
partitions)`: grow it to `partitions` partitions, as `kafka-topics.sh --alter
--partitions` would. `delete-topic(topic)`: request its deletion
(`/admin/delete_topics/<topic>`), as `kafka-topics.sh --delete` would.

`vacate(broker)`: move every replica off one broker (`chaos.run.vacate`), as an operator
retires a broker; it stays registered and hosts nothing.

`move-controller`: delete `/controller`, as an operator forces a new controller election
(`zookeeper-shell delete /controller`); the controller that held it is not told until its
watch fires, and the brokers race for the znode again.

`elect-leaders(topic, timeout_ms)`: ask the controller for preferred elections of every
partition of `topic` with the ElectLeaders request, as `kafka-leader-election.sh
--election-type preferred` does (KIP-183). The request is not persisted in ZooKeeper: a
controller elected meanwhile never learns of it. The controller answers after
`timeout_ms` at the latest and goes on electing; the answer is only reported. A request
that met no answer within the client's deadline (the controller paused or slowed) was
issued with its outcome unknown, as an admin client's timed-out call: reported, not a
failed action.

`alter-config(topic, key, value)`: set one override of `topic` in `/config/topics/<topic>`
(the others kept) and announce it with a `/config/changes/config_change_` notification, as
`kafka-configs.sh --alter --zookeeper` would; a value Kafka would refuse fails the action.

A topic param names the scenario's topic or `<scenario topic>-<suffix>`; `run_topic` maps
it onto the run's topic name, so that each run's side topics are its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from kazoo.exceptions import KazooException, NoNodeError
from kazoo.handlers.threading import KazooTimeoutError

from admin import AdminError
from admin.topics import add_partitions, create_topic, delete_topic
from chaos.errors import ChaosError
from chaos.generator.schedule import Action
from chaos.run.vacate import vacate
from client.errors import ClientError, TransportError
from domain import TopicPartition
from rpc.errors import Errors, RpcDeadlineExceeded
from rpc.messages import ElectLeadersRequest, ElectLeadersResponse
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.config_changes import ConfigChangesZk
from zkdata.errors import ZkDataError
from zkdata.model import PartitionReassignment, TopicConfig
from zkdata.reassignment import ReassignmentZk
from zkdata.topic_configs import validate_topic_config

#: Sends an ElectLeaders request to the controller and returns its answer; raises when no
#: controller could be reached (`client.Client.elect_leaders` behind it).
ElectLeaders = Callable[[ElectLeadersRequest], ElectLeadersResponse]
#: `ElectionType.PREFERRED` of Kafka's ElectLeaders.
PREFERRED_ELECTION = 0

#: What a ZooKeeper-side action may fail with: a lost or timed-out session (kazoo), a znode
#: that does not decode or a reassignment already running (`zkdata.errors.ZkDataError`), a
#: topic that exists or does not and the admin rules' errors (`admin.AdminError`, a
#: `ValueError`), and other `ValueError`s of bad input. Anything else is a bug and is not
#: caught.
ZK_ACTION_ERRORS: tuple[type[Exception], ...] = (
    KazooException,
    KazooTimeoutError,
    ZkDataError,
    AdminError,
    ValueError,
)
#: What an ElectLeaders request may fail with: no controller known, a transport failure.
ELECT_ERRORS: tuple[type[Exception], ...] = (ClientError,)

_KINDS = (
    "reassign",
    "create-topic",
    "add-partitions",
    "delete-topic",
    "move-controller",
    "elect-leaders",
    "alter-config",
    "vacate",
)


class ActionFailed(ChaosError):
    """An action could not be performed (unknown topic, a reassignment already running)."""


def shifted_assignment(
    assignment: Mapping[int, Sequence[int]], live: Sequence[int], shift: int
) -> dict[int, tuple[int, ...]]:
    """Each partition's replicas with broker `live[i]` replaced by `live[(i + shift) % n]`
    (replicas on brokers that are not live stay). Pure."""
    ids = sorted(live)
    moved = {b: ids[(i + shift) % len(ids)] for i, b in enumerate(ids)} if ids else {}
    return {p: tuple(moved.get(b, b) for b in replicas) for p, replicas in assignment.items()}


def run_topic(name: str, topic_names: Mapping[str, str]) -> str:
    """The run's name for the scenario topic `name`: its mapping in `topic_names`, or for
    `<scenario topic>-<suffix>` the run's topic with the same suffix; else `name`. Pure."""
    if name in topic_names:
        return topic_names[name]
    for scenario_topic, run_name in sorted(topic_names.items(), key=lambda kv: -len(kv[0])):
        if name.startswith(scenario_topic + "-"):
            return run_name + name[len(scenario_topic) :]
    return name


def perform(
    action: Action,
    read_zk: Callable[[Callable[[KafkaZkClient], str]], str],
    topic_names: Mapping[str, str],
    elect: ElectLeaders | None = None,
) -> str:
    """Perform `action` through `read_zk` (a ZooKeeper session runner, e.g.
    `ClusterHandle.read_zk`) and, for `elect-leaders`, `elect`; `topic_names` maps a
    scenario's topic name to this run's (`run_topic`). Returns a one-line description;
    raises `ActionFailed`."""
    if action.kind not in _KINDS:
        raise ActionFailed(f"unknown action {action.kind!r}")
    if action.kind == "move-controller":
        return read_zk(_moving_controller)
    if action.kind == "vacate":
        return read_zk(_vacating(str(action.param("broker"))))
    topic = run_topic(str(action.param("topic")), topic_names)
    if action.kind == "elect-leaders":
        return _electing(topic, action.param("timeout_ms"), read_zk, elect)
    if action.kind == "create-topic":
        created = _creating(topic, action.param("partitions"), action.param("replication_factor"))
        return read_zk(created)
    if action.kind == "add-partitions":
        return read_zk(_adding(topic, action.param("partitions")))
    if action.kind == "delete-topic":
        return read_zk(_deleting(topic))
    if action.kind == "alter-config":
        return read_zk(_altering(topic, str(action.param("key")), str(action.param("value"))))
    shift = action.param("shift")
    if not isinstance(shift, int):
        raise ActionFailed(f"reassign: shift must be an integer, got {shift!r}")

    def reassign(zk: KafkaZkClient) -> str:
        found = zk.get_topic_assignments([topic]).found.get(topic)
        if found is None:
            raise ActionFailed(f"reassign: topic {topic} does not exist")
        live = sorted(zk.get_all_brokers().brokers)
        current = {p: a.replicas for p, a in found.partitions.items()}
        target = shifted_assignment(current, live, shift)
        requests = [
            PartitionReassignment(TopicPartition(topic, p), replicas)
            for p, replicas in sorted(target.items())
        ]
        try:
            ReassignmentZk(zk).create_reassignments(requests)
        except ZK_ACTION_ERRORS as exc:  # a running reassignment, a lost session
            raise ActionFailed(f"reassign {topic}: {exc}") from exc
        return f"reassign {topic}: " + ", ".join(
            f"p{p} {list(current[p])}->{list(r)}" for p, r in sorted(target.items())
        )

    return read_zk(reassign)


def _count(action: str, name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ActionFailed(f"{action}: {name} must be an integer > 0, got {value!r}")
    return value


def _creating(topic: str, partitions: object, factor: object) -> Callable[[KafkaZkClient], str]:
    count = _count("create-topic", "partitions", partitions)
    replicas = _count("create-topic", "replication_factor", factor)

    def create(zk: KafkaZkClient) -> str:
        try:
            assignment = create_topic(zk, topic, count, replicas)
        except ZK_ACTION_ERRORS as exc:  # it exists, too few brokers, a lost session
            raise ActionFailed(f"create-topic {topic}: {exc}") from exc
        return f"create-topic {topic}: " + ", ".join(
            f"p{p} {list(r)}" for p, r in sorted(assignment.items())
        )

    return create


def _adding(topic: str, partitions: object) -> Callable[[KafkaZkClient], str]:
    count = _count("add-partitions", "partitions", partitions)

    def add(zk: KafkaZkClient) -> str:
        try:
            added = add_partitions(zk, topic, count)
        except ZK_ACTION_ERRORS as exc:  # no such topic, not more partitions, a lost session
            raise ActionFailed(f"add-partitions {topic}: {exc}") from exc
        return f"add-partitions {topic}: " + ", ".join(
            f"p{p} {list(r)}" for p, r in sorted(added.items())
        )

    return add


def _deleting(topic: str) -> Callable[[KafkaZkClient], str]:
    def delete(zk: KafkaZkClient) -> str:
        try:
            marked = delete_topic(zk, topic)
        except ZK_ACTION_ERRORS as exc:  # no such topic, a lost session
            raise ActionFailed(f"delete-topic {topic}: {exc}") from exc
        return f"delete-topic {topic}: " + ("requested" if marked else "already requested")

    return delete


def _vacating(role: str) -> Callable[[KafkaZkClient], str]:
    def run(zk: KafkaZkClient) -> str:
        try:
            return vacate(zk, role)
        except ZK_ACTION_ERRORS as exc:  # no such broker, a reassignment not ending, a lost session
            raise ActionFailed(str(exc)) from exc

    return run


def _moving_controller(zk: KafkaZkClient) -> str:
    held = zk.get_controller_id()
    try:
        zk.kazoo.retry(zk.kazoo.delete, paths.CONTROLLER)
    except NoNodeError:
        return "move-controller: no controller to move"
    except ZK_ACTION_ERRORS as exc:  # a lost session
        raise ActionFailed(f"move-controller: {exc}") from exc
    return f"move-controller: /controller of broker {held} deleted"


def _electing(
    topic: str,
    timeout_ms: object,
    read_zk: Callable[[Callable[[KafkaZkClient], str]], str],
    elect: ElectLeaders | None,
) -> str:
    if elect is None:
        raise ActionFailed("elect-leaders: this runner cannot reach the controller")
    if not isinstance(timeout_ms, int) or timeout_ms < 1:
        raise ActionFailed(f"elect-leaders: timeout_ms must be an integer > 0, got {timeout_ms!r}")

    def partition_ids(zk: KafkaZkClient) -> str:
        found = zk.get_topic_assignments([topic]).found.get(topic)
        if found is None:
            raise ActionFailed(f"elect-leaders: topic {topic} does not exist")
        return ",".join(str(p) for p in sorted(found.partitions))

    ids = read_zk(partition_ids)
    partitions = tuple(TopicPartition(topic, int(p)) for p in ids.split(",") if p)
    said = f"elect-leaders {topic} ({len(partitions)} partitions): "
    try:
        reply = elect(ElectLeadersRequest(PREFERRED_ELECTION, partitions, timeout_ms))
    except TransportError as exc:
        if isinstance(exc.cause, RpcDeadlineExceeded):
            # sent to a controller that did not answer in time (paused, slowed): issued,
            # its outcome unknown, as an admin client's timed-out call
            return said + f"sent, no answer ({exc}); the controller may still elect"
        raise ActionFailed(f"elect-leaders {topic}: {exc}") from exc
    except ELECT_ERRORS as exc:  # no controller known
        raise ActionFailed(f"elect-leaders {topic}: {exc}") from exc
    return said + describe_elections(reply)


def describe_elections(reply: ElectLeadersResponse) -> str:
    """The controller's answer in a few words: its request-level error, else how many
    partitions got each outcome. Pure."""
    if reply.error is not Errors.NONE:
        return f"the controller answered {reply.error.name}"
    outcomes: dict[str, int] = {}
    for result in reply.results:
        outcomes[result.error.name] = outcomes.get(result.error.name, 0) + 1
    return ", ".join(f"{name} {n}" for name, n in sorted(outcomes.items())) or "no results"


def _altering(topic: str, key: str, value: str) -> Callable[[KafkaZkClient], str]:
    def alter(zk: KafkaZkClient) -> str:
        try:
            if topic not in zk.get_all_topics():
                raise ActionFailed(f"alter-config {topic}: no such topic")
            read = zk.get_topic_configs([topic])
            if topic in read.malformed:
                raise ActionFailed(f"alter-config {topic}: {read.malformed[topic].reason}")
            current = read.found.get(topic)
            config = {**(current.config if current else {}), key: value}
            validate_topic_config(config)
            ConfigChangesZk(zk).change_topic_config(topic, TopicConfig(config))
        except ZK_ACTION_ERRORS as exc:  # a value Kafka refuses, a lost session
            raise ActionFailed(f"alter-config {topic}: {exc}") from exc
        return f"alter-config {topic}: {key}={value}"

    return alter
