"""`testbed topics alter` against a real ensemble: what it writes to `/brokers/topics/T`
(Kafka's placement or the requested replicas, existing partitions and the topic id kept)
and, for every refusal, an `Error:` line with exit code 1 and the topic znode untouched.
No controller runs here: the tests check ZooKeeper only."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

import pytest
from cli_runner import register_brokers, run
from kazoo.client import KazooClient

import admin.topics
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment
from zkdata.znodes import TopicZNode

pytestmark = pytest.mark.integration

TOPIC_ID = "p5mHs1EETwSxMlzMBm3WwA"


@pytest.fixture
def registered(zk_client: KazooClient) -> KafkaZkClient:
    """Brokers 1-3 registered (by this test's session) so that partitions can be placed."""
    return register_brokers(zk_client)


def _create(
    zk: KafkaZkClient,
    replicas: Mapping[int, ReplicaAssignment | tuple[int, ...]],
    topic_id: str | None = None,
    name: str = "t",
) -> None:
    partitions = {
        p: r if isinstance(r, ReplicaAssignment) else ReplicaAssignment(r)
        for p, r in replicas.items()
    }
    zk.create_topic(name, TopicAssignment(partitions, topic_id))


def _replicas(zk: KafkaZkClient, topic: str = "t") -> dict[int, tuple[int, ...]]:
    found = zk.get_topic_assignments([topic]).found[topic].partitions
    return {p: a.replicas for p, a in sorted(found.items())}


def _alter(capsys: pytest.CaptureFixture[str], zk_connect: str, *argv: str) -> tuple[int, str, str]:
    return run(capsys, "topics", "alter", "--zk", zk_connect, "--topic", "t", *argv)


def test_partitions_are_added_with_kafkas_placement(
    registered: KafkaZkClient,
    zk_connect: str,
    zk_client: KazooClient,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Setup: topic t with 3 partitions, partition 0 led by broker 1 (start index 0).
    Steps: alter --partitions 5.
    Validate: partitions 3 and 4 continue Kafka's round robin with the replica shift moved
    on at partition 3; the existing partitions are unchanged; one conditional write."""
    _create(registered, {0: (1, 2), 1: (2, 3), 2: (3, 1)})
    _, before = zk_client.get(paths.topic("t"))
    code, out, err = _alter(capsys, zk_connect, "--partitions", "5")
    assert (code, out, err) == (0, "Added partitions 3..4 to topic t.\n", "")
    assert _replicas(registered) == {0: (1, 2), 1: (2, 3), 2: (3, 1), 3: (1, 3), 4: (2, 1)}
    data, after = zk_client.get(paths.topic("t"))
    assert after.version == before.version + 1
    assert json.loads(data)["version"] == 2


def test_requested_replicas_are_written_and_existing_entries_ignored(
    registered: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The entry for partition 0 names broker 9, which is not registered: it is ignored
    because partition 0 exists; partitions 1 and 2 get the replicas asked for."""
    _create(registered, {0: (1, 2)})
    code, out, _ = _alter(
        capsys, zk_connect, "--partitions", "3", "--replica-assignment", "9:9,3:2,2:1"
    )
    assert (code, out) == (0, "Added partitions 1..2 to topic t.\n")
    assert _replicas(registered) == {0: (1, 2), 1: (3, 2), 2: (2, 1)}


def test_one_partition_added_to_a_topic_with_an_id_keeps_the_id(
    registered: KafkaZkClient,
    zk_connect: str,
    zk_client: KazooClient,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A topic written by Kafka 2.8 (version 3, with a topic id) keeps its id and version."""
    _create(registered, {0: (2, 3, 1)}, topic_id=TOPIC_ID)
    code, out, _ = _alter(capsys, zk_connect, "--partitions", "2")
    assert (code, out) == (0, "Added partition 1 to topic t.\n")
    data, _ = zk_client.get(paths.topic("t"))
    assert json.loads(data)["version"] == 3
    decoded = TopicZNode.decode(data)
    assert decoded.topic_id == TOPIC_ID
    assert {p: a.replicas for p, a in decoded.partitions.items()} == {0: (2, 3, 1), 1: (3, 2, 1)}


def test_other_topics_are_untouched(
    registered: KafkaZkClient,
    zk_connect: str,
    zk_client: KazooClient,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _create(registered, {0: (1,)})
    _create(registered, {0: (1,)}, name="u")
    before = zk_client.get(paths.topic("u"))
    assert _alter(capsys, zk_connect, "--partitions", "2")[0] == 0
    assert zk_client.get(paths.topic("u")) == before


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["--partitions", "3"],
            "A topic's partition count can only grow: topic 't' has 3 partitions, so "
            "--partitions 3 adds none",
            id="same-count",
        ),
        pytest.param(
            ["--partitions", "2"],
            "topic 't' has 3 partitions, so --partitions 2 adds none",
            id="fewer",
        ),
        pytest.param(
            ["--partitions", "5", "--replica-assignment", "1:2,2:3,3:1,1:2"],
            "--replica-assignment lists 4 partitions but --partitions is 5",
            id="assignment-too-short",
        ),
        pytest.param(
            ["--partitions", "4", "--replica-assignment", "1:2,2:3,3:1,2:2"],
            "Duplicate brokers not allowed in replica assignment: 2, 2 for partition id 3.",
            id="duplicate-broker",
        ),
        pytest.param(
            ["--partitions", "4", "--replica-assignment", "1:2,2:3,3:1,1:7"],
            "Some brokers specified for partition id 3 are not available. Specified "
            "brokers: 1, 7, available brokers: 1, 2, 3.",
            id="broker-not-registered",
        ),
        pytest.param(
            ["--partitions", "5", "--replica-assignment", "1:2,2:3,3:1,1:2:3,1"],
            "Inconsistent replication factor between partitions, partition 0 has 2 while "
            "partitions [3, 4] have replication factors [3, 1], respectively.",
            id="other-replication-factor",
        ),
        pytest.param(
            ["--partitions", "4", "--replica-assignment", "1:2,2:3,3:1,1:x"],
            "Replica assignment '1:2,2:3,3:1,1:x' is not of the form 1:2,2:3 (partition 3)",
            id="assignment-not-integers",
        ),
    ],
)
def test_refused_alters_leave_the_topic_alone(
    registered: KafkaZkClient,
    zk_connect: str,
    zk_client: KazooClient,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    """Each refused request exits 1 with an `Error:` line; the topic znode is unchanged."""
    _create(registered, {0: (1, 2), 1: (2, 3), 2: (3, 1)})
    before = zk_client.get(paths.topic("t"))
    code, out, err = _alter(capsys, zk_connect, *argv)
    assert (code, out) == (1, "")
    assert err.startswith("Error: ")
    assert message in err
    assert zk_client.get(paths.topic("t")) == before


def test_unknown_topic_fails(
    registered: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _alter(capsys, zk_connect, "--partitions", "2")
    assert (code, err) == (1, "Error: Topic 't' does not exist\n")


def test_topic_marked_for_deletion_is_refused(
    registered: KafkaZkClient,
    zk_connect: str,
    zk_client: KazooClient,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _create(registered, {0: (1, 2)})
    zk_client.create(paths.delete_topic("t"), b"", makepath=True)
    before = zk_client.get(paths.topic("t"))
    code, _, err = _alter(capsys, zk_connect, "--partitions", "2")
    assert (code, err) == (
        1,
        "Error: Topic 't' is marked for deletion; partitions cannot be added to it\n",
    )
    assert zk_client.get(paths.topic("t")) == before


def test_reassignment_in_flight_is_refused(
    registered: KafkaZkClient,
    zk_connect: str,
    zk_client: KazooClient,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Partition 1 is moving from [2,3] to [1,2]: broker 1 being added, 3 removed."""
    moving = ReplicaAssignment((1, 2, 3), adding_replicas=(1,), removing_replicas=(3,))
    _create(registered, {0: (1, 2), 1: moving})
    before = zk_client.get(paths.topic("t"))
    code, _, err = _alter(capsys, zk_connect, "--partitions", "3")
    assert code == 1
    assert err.startswith(
        "Error: Topic 't' has a partition reassignment in progress (partitions 1)"
    )
    assert zk_client.get(paths.topic("t")) == before


def test_replication_factor_above_the_registered_brokers_is_refused(
    registered: KafkaZkClient,
    zk_connect: str,
    zk_client: KazooClient,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Partition 0 has 4 replicas, broker 4 having left: no placement has room for 4."""
    _create(registered, {0: (1, 2, 3, 4)})
    before = zk_client.get(paths.topic("t"))
    code, _, err = _alter(capsys, zk_connect, "--partitions", "2")
    assert (code, err) == (1, "Error: Replication factor: 4 larger than available brokers: 3.\n")
    assert zk_client.get(paths.topic("t")) == before


def test_malformed_topic_znode_is_reported_with_its_path(
    registered: KafkaZkClient,
    zk_connect: str,
    zk_client: KazooClient,
    capsys: pytest.CaptureFixture[str],
) -> None:
    zk_client.create(paths.topic("t"), b"not json", makepath=True)
    before = zk_client.get(paths.topic("t"))
    code, _, err = _alter(capsys, zk_connect, "--partitions", "2")
    assert code == 1
    assert err.startswith(f"Error: {paths.topic('t')}: ")
    assert zk_client.get(paths.topic("t")) == before


def test_a_topic_changed_after_the_read_is_not_overwritten(
    registered: KafkaZkClient,
    zk_connect: str,
    zk_client: KazooClient,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Setup: topic t with one partition.
    Steps: alter --partitions 3, while another client rewrites the topic (partition 1 added
    on broker 3) after the command has read it and before it writes.
    Validate: the conditional write fails (BADVERSION), the command asks to run it again,
    and the other client's assignment stands."""
    _create(registered, {0: (1, 2)})
    theirs = TopicZNode.encode(
        TopicAssignment({0: ReplicaAssignment((1, 2)), 1: ReplicaAssignment((3, 1))})
    )
    decide = admin.topics.new_partitions

    def decide_while_someone_writes(
        topic: str,
        existing: Mapping[int, ReplicaAssignment],
        partitions: int,
        live: AbstractSet[int],
        requested: Mapping[int, Sequence[int]] | None = None,
    ) -> dict[int, tuple[int, ...]]:
        zk_client.set(paths.topic("t"), theirs)
        return decide(topic, existing, partitions, live, requested)

    monkeypatch.setattr(admin.topics, "new_partitions", decide_while_someone_writes)
    code, out, err = _alter(capsys, zk_connect, "--partitions", "3")
    assert (code, out) == (1, "")
    assert err.startswith("Error: Topic 't' changed while its partitions were being added")
    assert "run the command again" in err
    assert zk_client.get(paths.topic("t"))[0] == theirs


def test_alter_help_and_missing_partitions(capsys: pytest.CaptureFixture[str]) -> None:
    """--help exits 0; --partitions is required (exit 2, usage on stderr)."""
    code, out, _ = run(capsys, "topics", "alter", "--help")
    assert code == 0
    assert out.startswith("usage: testbed topics alter")
    code, _, err = run(capsys, "topics", "alter", "--topic", "t")
    assert code == 2
    assert "--partitions" in err
