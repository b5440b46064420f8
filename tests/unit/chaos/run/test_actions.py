"""The admin operations a schedule's actions ask for: the reassignment of `reassign`, the
run's names of the topics they act on, and `create-topic` / `add-partitions` /
`delete-topic` handing the right topic to the topic commands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import pytest
from kazoo.exceptions import ConnectionLoss, NoNodeError

from admin import TopicOperationError
from chaos.generator.schedule import Action
from chaos.run import actions
from chaos.run.actions import ActionFailed, perform, run_topic, shifted_assignment
from client.errors import ControllerUnknown, TransportError
from domain import TopicPartition
from rpc.errors import Errors, RpcDeadlineExceeded, RpcUnavailable
from rpc.messages import ElectLeadersRequest, ElectLeadersResponse, PartitionElectionResult
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment, TopicConfig
from zkdata.pipelined_reads import Reads


def test_every_replica_moves_to_the_next_live_broker() -> None:
    assert shifted_assignment({0: (1, 2), 1: (2, 3)}, [1, 2, 3], 1) == {0: (2, 3), 1: (3, 1)}


def test_a_shift_by_the_broker_count_changes_nothing() -> None:
    assert shifted_assignment({0: (1, 2, 3)}, [3, 1, 2], 3) == {0: (1, 2, 3)}


def test_replicas_on_brokers_that_are_not_live_stay() -> None:
    assert shifted_assignment({0: (1, 4)}, [1, 2], 1) == {0: (2, 4)}


NAMES = {"chaos-x": "chaos-x-1a2b3c", "chaos-x-y": "chaos-x-y-9f9f9f"}


@pytest.mark.parametrize(
    ("name", "run_name"),
    [
        ("chaos-x", "chaos-x-1a2b3c"),
        ("chaos-x-doomed", "chaos-x-1a2b3c-doomed"),
        ("chaos-x-y-doomed", "chaos-x-y-9f9f9f-doomed"),  # the longest scenario topic wins
        ("other", "other"),
        ("chaos-xdoomed", "chaos-xdoomed"),
    ],
)
def test_a_topic_beside_the_scenarios_gets_the_runs_name(name: str, run_name: str) -> None:
    assert run_topic(name, NAMES) == run_name


def _zk(calls: list[str]) -> Callable[[Callable[[Any], str]], str]:
    def read_zk(work: Callable[[Any], str]) -> str:
        calls.append("session")
        return work("zk")

    return read_zk


def test_create_and_delete_topic_act_on_the_runs_side_topic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[Any, ...]] = []

    def create(zk: str, name: str, partitions: int, rf: int) -> dict[int, tuple[int, ...]]:
        seen.append(("create", zk, name, partitions, rf))
        return {0: (1, 2, 3)}

    def delete(zk: str, name: str) -> bool:
        seen.append(("delete", zk, name))
        return True

    monkeypatch.setattr(actions, "create_topic", create)
    monkeypatch.setattr(actions, "delete_topic", delete)
    sessions: list[str] = []
    made = Action(8.0, "create-topic", (("partitions", 2), ("topic", "chaos-x-doomed")))
    gone = Action(9.0, "delete-topic", (("topic", "chaos-x-doomed"),))
    said = perform(made, _zk(sessions), {"chaos-x": "chaos-x-1a2b3c"})
    assert said == "create-topic chaos-x-1a2b3c-doomed: p0 [1, 2, 3]"
    said = perform(gone, _zk(sessions), {"chaos-x": "chaos-x-1a2b3c"})
    assert said == "delete-topic chaos-x-1a2b3c-doomed: requested"
    assert seen == [
        ("create", "zk", "chaos-x-1a2b3c-doomed", 2, 3),
        ("delete", "zk", "chaos-x-1a2b3c-doomed"),
    ]
    assert sessions == ["session", "session"]


def test_create_topic_takes_its_replication_factor_and_add_partitions_grows_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[Any, ...]] = []

    def create(zk: str, name: str, partitions: int, rf: int) -> dict[int, tuple[int, ...]]:
        seen.append(("create", name, partitions, rf))
        return {0: (1, 2)}

    def add(zk: str, name: str, partitions: int) -> dict[int, tuple[int, ...]]:
        seen.append(("add", name, partitions))
        return {3: (2, 3)}

    monkeypatch.setattr(actions, "create_topic", create)
    monkeypatch.setattr(actions, "add_partitions", add)
    topics = {"chaos-x": "chaos-x-1a2b3c"}
    made = Action(
        1.0, "create-topic", (("partitions", 3), ("replication_factor", 2), ("topic", "chaos-x-s"))
    )
    grown = Action(2.0, "add-partitions", (("partitions", 4), ("topic", "chaos-x-s")))
    assert perform(made, _zk([]), topics) == "create-topic chaos-x-1a2b3c-s: p0 [1, 2]"
    assert perform(grown, _zk([]), topics) == "add-partitions chaos-x-1a2b3c-s: p3 [2, 3]"
    assert seen == [("create", "chaos-x-1a2b3c-s", 3, 2), ("add", "chaos-x-1a2b3c-s", 4)]


def test_adding_partitions_to_a_topic_that_cannot_take_them_fails_the_action(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def add(zk: str, name: str, partitions: int) -> dict[int, tuple[int, ...]]:
        raise TopicOperationError(f"Topic '{name}' does not exist")

    monkeypatch.setattr(actions, "add_partitions", add)
    grown = Action(2.0, "add-partitions", (("partitions", 4), ("topic", "t")))
    with pytest.raises(ActionFailed, match="add-partitions t: Topic"):
        perform(grown, _zk([]), {})


def test_deleting_a_topic_that_does_not_exist_fails_the_action(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def delete(zk: str, name: str) -> bool:
        raise TopicOperationError(f"Topic '{name}' does not exist as expected")

    monkeypatch.setattr(actions, "delete_topic", delete)
    gone = Action(9.0, "delete-topic", (("topic", "chaos-x-doomed"),))
    with pytest.raises(ActionFailed, match="delete-topic chaos-x-doomed: Topic"):
        perform(gone, _zk([]), {})


class _Kazoo:
    def __init__(self, present: bool) -> None:
        self.present = present
        self.deleted: list[str] = []

    def retry(self, call: Callable[..., Any], *args: Any) -> Any:
        return call(*args)

    def delete(self, path: str) -> None:
        if not self.present:
            raise NoNodeError()
        self.deleted.append(path)


class _Zk:
    def __init__(self, kazoo: _Kazoo) -> None:
        self.kazoo = kazoo

    def get_controller_id(self) -> int | None:
        return 2 if self.kazoo.present else None


@pytest.mark.parametrize("present", [True, False])
def test_move_controller_deletes_the_controller_znode(present: bool) -> None:
    kazoo = _Kazoo(present)
    zk = cast(KafkaZkClient, _Zk(kazoo))
    said = perform(Action(5.0, "move-controller", ()), lambda work: work(zk), {})
    if present:
        assert said == "move-controller: /controller of broker 2 deleted"
        assert kazoo.deleted == ["/controller"]
    else:
        assert said == "move-controller: no controller to move"


class _Assignments:
    """Answers `get_topic_assignments` for one topic with partitions `ids`."""

    def __init__(self, topic: str, ids: tuple[int, ...]) -> None:
        self.topic, self.ids = topic, ids

    def get_topic_assignments(self, topics: list[str]) -> Any:
        class Found:
            found = {
                t: TopicAssignment({p: ReplicaAssignment((1, 2, 3)) for p in self.ids})
                for t in topics
                if t == self.topic
            }

        return Found()


ELECT = Action(9.0, "elect-leaders", (("topic", "chaos-x"), ("timeout_ms", 100)))


def test_elect_leaders_asks_for_preferred_elections_of_every_partition_of_the_runs_topic() -> None:
    sent: list[ElectLeadersRequest] = []
    zk = cast(KafkaZkClient, _Assignments("chaos-x-1a2b3c", (0, 1, 2)))

    def elect(request: ElectLeadersRequest) -> ElectLeadersResponse:
        sent.append(request)
        done = PartitionElectionResult(request.partitions[0], Errors.NONE)
        rest = [
            PartitionElectionResult(tp, Errors.ELECTION_NOT_NEEDED) for tp in request.partitions[1:]
        ]
        return ElectLeadersResponse(Errors.NONE, (done, *rest))

    said = perform(ELECT, lambda work: work(zk), NAMES, elect)
    assert sent == [
        ElectLeadersRequest(0, tuple(TopicPartition("chaos-x-1a2b3c", p) for p in (0, 1, 2)), 100)
    ]
    assert said == "elect-leaders chaos-x-1a2b3c (3 partitions): ELECTION_NOT_NEEDED 2, NONE 1"


def test_a_timed_out_answer_is_reported_not_failed() -> None:
    zk = cast(KafkaZkClient, _Assignments("chaos-x-1a2b3c", (0,)))
    said = perform(
        ELECT,
        lambda work: work(zk),
        NAMES,
        lambda request: ElectLeadersResponse(Errors.REQUEST_TIMED_OUT),
    )
    assert said.endswith("the controller answered REQUEST_TIMED_OUT")


def test_a_request_without_an_answer_was_issued_with_its_outcome_unknown() -> None:
    # a blind hunt's run: the controller paused as preferred elections were asked for
    zk = cast(KafkaZkClient, _Assignments("chaos-x-1a2b3c", (0, 1)))

    def unanswered(request: ElectLeadersRequest) -> ElectLeadersResponse:
        raise TransportError(RpcDeadlineExceeded("127.0.0.1:9092", "DEADLINE_EXCEEDED"))

    said = perform(ELECT, lambda work: work(zk), NAMES, unanswered)
    assert said.startswith("elect-leaders chaos-x-1a2b3c (2 partitions): sent, no answer")
    assert "may still elect" in said

    def refused(request: ElectLeadersRequest) -> ElectLeadersResponse:
        raise TransportError(RpcUnavailable("127.0.0.1:9092", "UNAVAILABLE"))

    with pytest.raises(ActionFailed, match="UNAVAILABLE"):
        perform(ELECT, lambda work: work(zk), NAMES, refused)


def _unreachable(request: ElectLeadersRequest) -> ElectLeadersResponse:
    raise ControllerUnknown("no controller is known")


@pytest.mark.parametrize(
    ("topic", "elect", "message"),
    [
        ("chaos-x-1a2b3c", _unreachable, "no controller is known"),
        ("elsewhere", _unreachable, "does not exist"),
        ("chaos-x-1a2b3c", None, "cannot reach the controller"),
    ],
)
def test_elect_leaders_fails_without_a_topic_or_a_controller(
    topic: str, elect: Any, message: str
) -> None:
    zk = cast(KafkaZkClient, _Assignments(topic, (0,)))
    with pytest.raises(ActionFailed, match=message):
        perform(ELECT, lambda work: work(zk), NAMES, elect)


@pytest.mark.parametrize(
    "failure",
    [ConnectionLoss("session lost"), TopicOperationError("Topic 'x' does not exist as expected")],
    ids=["kazoo", "topic-command"],
)
def test_a_zookeeper_side_failure_fails_the_action(
    monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    def delete(zk: str, name: str) -> bool:
        raise failure

    monkeypatch.setattr(actions, "delete_topic", delete)
    gone = Action(9.0, "delete-topic", (("topic", "chaos-x-doomed"),))
    with pytest.raises(ActionFailed, match="delete-topic chaos-x-doomed"):
        perform(gone, _zk([]), {})


def test_a_bug_in_an_action_is_not_taken_for_a_failed_action(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def delete(zk: str, name: str) -> bool:
        raise KeyError("a bug, not a cluster failure")

    monkeypatch.setattr(actions, "delete_topic", delete)
    gone = Action(9.0, "delete-topic", (("topic", "chaos-x-doomed"),))
    with pytest.raises(KeyError, match="a bug"):
        perform(gone, _zk([]), {})


def test_an_elect_leaders_bug_is_not_taken_for_an_unreachable_controller() -> None:
    def broken(request: ElectLeadersRequest) -> ElectLeadersResponse:
        raise AttributeError("a bug, not a transport failure")

    zk = cast(KafkaZkClient, _Assignments("chaos-x-1a2b3c", (0,)))
    with pytest.raises(AttributeError, match="a bug"):
        perform(ELECT, lambda work: work(zk), NAMES, broken)


class ConfigZk:
    """The ZooKeeper reads `alter-config` makes: the topics, and their overrides."""

    def __init__(self, topics: set[str], overrides: dict[str, dict[str, str]]) -> None:
        self.topics = topics
        self.overrides = overrides

    def get_all_topics(self) -> set[str]:
        return self.topics

    def get_topic_configs(self, topics: list[str]) -> Reads[str, TopicConfig]:
        found = {t: TopicConfig(self.overrides[t]) for t in topics if t in self.overrides}
        return Reads(found, {})


def _altered(
    monkeypatch: pytest.MonkeyPatch, zk: ConfigZk, key: str, value: str
) -> tuple[str, list[tuple[str, dict[str, str]]]]:
    changed: list[tuple[str, dict[str, str]]] = []

    class Changes:
        def __init__(self, client: Any) -> None:
            assert client is zk

        def change_topic_config(self, topic: str, config: TopicConfig) -> str:
            changed.append((topic, dict(config.config)))
            return "/config/changes/config_change_0000000001"

    monkeypatch.setattr(actions, "ConfigChangesZk", Changes)
    params = (("key", key), ("topic", "chaos-x-side"), ("value", value))

    def read_zk(work: Callable[[Any], str]) -> str:
        return work(zk)

    said = perform(Action(3.0, "alter-config", params), read_zk, {"chaos-x": "chaos-x-1a2b3c"})
    return said, changed


def test_alter_config_sets_one_override_keeps_the_others_and_announces_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    zk = ConfigZk({"chaos-x-1a2b3c-side"}, {"chaos-x-1a2b3c-side": {"min.insync.replicas": "2"}})
    said, changed = _altered(monkeypatch, zk, "unclean.leader.election.enable", "true")
    assert said == "alter-config chaos-x-1a2b3c-side: unclean.leader.election.enable=true"
    assert changed == [
        (
            "chaos-x-1a2b3c-side",
            {"min.insync.replicas": "2", "unclean.leader.election.enable": "true"},
        )
    ]


@pytest.mark.parametrize(
    ("topics", "key", "value", "message"),
    [
        (set(), "min.insync.replicas", "2", "no such topic"),
        ({"chaos-x-1a2b3c-side"}, "min.insync.replicas", "0", "must be an integer"),
        ({"chaos-x-1a2b3c-side"}, "unclean.leader.election.enable", "yes", "true or false"),
    ],
)
def test_alter_config_of_a_missing_topic_or_a_bad_value_fails_the_action_and_writes_nothing(
    monkeypatch: pytest.MonkeyPatch, topics: set[str], key: str, value: str, message: str
) -> None:
    with pytest.raises(ActionFailed, match=message):
        _altered(monkeypatch, ConfigZk(topics, {}), key, value)
