"""`testbed` command line against a real ensemble: happy paths and clear errors with
non-zero exit codes (bad arguments exit 2, failed commands exit 1)."""

from __future__ import annotations

import socket

import pytest
from cli_runner import register_brokers, run
from kazoo.client import KazooClient

from zkdata import paths
from zkdata.client import KafkaZkClient

pytestmark = pytest.mark.integration


@pytest.fixture
def registered(zk_client: KazooClient) -> KafkaZkClient:
    """Brokers 1-3 registered (by this test's session) so that assignments can be made."""
    return register_brokers(zk_client)


def test_create_list_and_describe_a_topic(
    registered: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """create writes Kafka's assignment; list and describe show it."""
    code, out, _ = run(
        capsys,
        "topics",
        "create",
        "--zk",
        zk_connect,
        "--topic",
        "t",
        "--partitions",
        "6",
        "--replication-factor",
        "3",
        "--config",
        "unclean.leader.election.enable=true",
    )
    assert (code, out.strip()) == (0, "Created topic t.")
    assignment = registered.get_topic_assignments(["t"]).found["t"]
    assert sorted(assignment.partitions) == list(range(6))
    assert all(sorted(a.replicas) == [1, 2, 3] for a in assignment.partitions.values())
    assert registered.get_topic_configs(["t"]).found["t"].config == {
        "unclean.leader.election.enable": "true"
    }
    code, out, _ = run(capsys, "topics", "list", "--zk", zk_connect)
    assert (code, out.split()) == (0, ["t"])
    topic_id = assignment.topic_id
    assert topic_id is not None  # Kafka 2.8 gives every topic an id
    assert len(topic_id) == 22
    code, out, _ = run(capsys, "topics", "describe", "--zk", zk_connect, "--topic", "t")
    assert code == 0
    assert out.startswith(f"Topic: t\tTopicId: {topic_id}\tPartitionCount: 6\tReplicationFactor: 3")
    assert out.count("Leader: none") == 6  # no controller runs in this test


def test_explicit_assignment(
    registered: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--replica-assignment is written as given."""
    code, _, _ = run(
        capsys,
        "topics",
        "create",
        "--zk",
        zk_connect,
        "--topic",
        "x",
        "--replica-assignment",
        "1:2,2:3,3:1",
    )
    assert code == 0
    found = registered.get_topic_assignments(["x"]).found["x"].partitions
    assert {p: a.replicas for p, a in found.items()} == {0: (1, 2), 1: (2, 3), 2: (3, 1)}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["--topic", "big", "--partitions", "1", "--replication-factor", "4"],
            "Replication factor: 4 larger than available brokers: 3.",
            id="replication-factor-above-live-brokers",
        ),
        pytest.param(
            ["--topic", "bad name!", "--partitions", "1", "--replication-factor", "1"],
            "is illegal",
            id="illegal-topic-name",
        ),
        pytest.param(
            ["--topic", "zero", "--partitions", "0", "--replication-factor", "1"],
            "partitions",
            id="zero-partitions",
        ),
        pytest.param(
            ["--topic", "dead", "--replica-assignment", "1:7"],
            "7",
            id="assignment-names-an-unknown-broker",
        ),
        pytest.param(
            ["--topic", "dup", "--replica-assignment", "1:1"],
            "1",
            id="assignment-repeats-a-broker",
        ),
        pytest.param(
            ["--topic", "half", "--partitions", "3"], "--replication-factor", id="missing-rf"
        ),
        pytest.param(
            ["--topic", "cfg", "--partitions", "1", "--replication-factor", "1", "--config", "x"],
            "key=value",
            id="malformed-config",
        ),
    ],
)
def test_bad_create_requests_fail_clearly_and_write_nothing(
    registered: KafkaZkClient,
    zk_connect: str,
    zk_client: KazooClient,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    """Each bad request exits 1 with an `Error:` line naming the problem; no topic appears."""
    code, _, err = run(capsys, "topics", "create", "--zk", zk_connect, *argv)
    assert code == 1
    assert err.startswith("Error: ")
    assert message.lower() in err.lower()
    assert zk_client.get_children(paths.BROKER_TOPICS) == []


def test_creating_an_existing_topic_fails(
    registered: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second create of the same topic exits 1 and leaves the first assignment alone."""
    args = ["topics", "create", "--zk", zk_connect, "--topic", "t", "--replica-assignment", "1"]
    assert run(capsys, *args)[0] == 0
    code, _, err = run(
        capsys, "topics", "create", "--zk", zk_connect, "--topic", "t", "--replica-assignment", "2"
    )
    assert code == 1
    assert "already exists" in err
    assert registered.get_topic_assignments(["t"]).found["t"].partitions[0].replicas == (1,)


def test_a_name_colliding_with_an_existing_topic_is_refused(
    registered: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`a.b` and `a_b` would share metric names, so Kafka refuses the second; so does this."""
    args = ["topics", "create", "--zk", zk_connect, "--replica-assignment", "1"]
    assert run(capsys, *args, "--topic", "a_b")[0] == 0
    code, _, err = run(capsys, *args, "--topic", "a.b")
    assert code == 1
    assert "Topic 'a.b' collides with existing topics: a_b" in err
    assert registered.get_all_topics() == {"a_b"}


def test_describing_an_unknown_topic_fails(
    registered: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """describe of a missing topic exits 1 naming it."""
    code, _, err = run(capsys, "topics", "describe", "--zk", zk_connect, "--topic", "nope")
    assert code == 1
    assert "'nope' does not exist" in err


def test_unreachable_zookeeper_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    """No server at the address: exit 1 with a message, quickly."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, _, err = run(capsys, "topics", "list", "--zk", f"127.0.0.1:{port}")
    assert code == 1
    assert "cannot reach ZooKeeper" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["cluster", "--help"],
        ["topics", "--help"],
        ["topics", "create", "--help"],
        ["topics", "list", "--help"],
        ["topics", "describe", "--help"],
        ["topics", "delete", "--help"],
        ["elect-leaders", "--help"],
        ["zk", "--help"],
    ],
)
def test_every_command_has_help(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    """--help prints usage and exits 0."""
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert out.startswith("usage: testbed")


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["topics"],
        ["topics", "create"],
        ["topics", "create", "--topic", "t", "--partitions", "x"],
        ["nonsense"],
        ["elect-leaders", "--all-topic-partitions"],
        ["elect-leaders", "--election-type", "clean", "--all-topic-partitions"],
        ["zk", "rm", "/"],
    ],
)
def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    """argparse errors exit 2 with a usage line on stderr."""
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert "usage:" in err


def test_zk_view_lists_gets_and_draws_the_tree(
    registered: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """ls, get (data and Stat) and tree of the chroot; a missing path exits 1."""
    code, out, _ = run(capsys, "zk", "--zk", zk_connect, "ls", "/brokers/ids")
    assert (code, out.split()) == (0, ["1", "2", "3"])
    code, out, _ = run(capsys, "zk", "--zk", zk_connect, "get", "/brokers/ids/2")
    assert code == 0
    assert '"version":5' in out
    assert "ephemeralOwner = 0x" in out
    code, out, _ = run(capsys, "zk", "--zk", zk_connect, "tree", "/brokers", "--depth", "2")
    assert code == 0
    assert out.splitlines()[:3] == ["/brokers", "  ids", "    1"]
    code, _, err = run(capsys, "zk", "--zk", zk_connect, "get", "/nowhere")
    assert code == 1
    assert "/nowhere does not exist" in err


def test_elect_leaders_without_a_controller_or_topic_fails_clearly(
    registered: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """No controller elected: exit 1; an unknown topic: exit 1 naming it."""
    code, _, err = run(
        capsys,
        "elect-leaders",
        "--zk",
        zk_connect,
        "--election-type",
        "preferred",
        "--all-topic-partitions",
    )
    assert (code, err.strip()) == (1, "Error: no controller is elected")
    code, _, err = run(
        capsys,
        "elect-leaders",
        "--zk",
        zk_connect,
        "--election-type",
        "preferred",
        "--topic",
        "nope",
    )
    assert code == 1
    assert "'nope' does not exist" in err


def test_describe_filters_and_cluster_count_partitions_without_leaders(
    registered: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """No controller runs here, so no partition has a leader: the unavailable filter shows
    them all, and `cluster` counts them offline."""
    assert (
        run(
            capsys,
            "topics",
            "create",
            "--zk",
            zk_connect,
            "--topic",
            "f",
            "--replica-assignment",
            "1:2,2:3",
        )[0]
        == 0
    )
    code, out, _ = run(capsys, "topics", "describe", "--zk", zk_connect, "--unavailable-partitions")
    assert code == 0
    assert out.count("Leader: none") == 2
    code, out, _ = run(capsys, "cluster", "--zk", zk_connect)
    assert code == 0
    assert "Partitions: 2, offline: 2" in out
    assert "offline: f-0, f-1" in out


_RACKS = {1: "a", 2: "a", 3: "b", 4: "b"}


def test_create_spreads_each_partition_over_the_racks(
    zk_client: KazooClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """With every broker on a rack, Kafka's rack-aware rule puts the two replicas of each
    partition on different racks (the rack-unaware rule, over brokers 1-4 in id order,
    pairs 1 with 2 or 3 with 4 in some partition of any 12)."""
    zk = register_brokers(zk_client, (1, 2, 3, 4), _RACKS)
    args = ["--partitions", "12", "--replication-factor", "2"]
    code, _, err = run(capsys, "topics", "create", "--zk", zk_connect, "--topic", "t", *args)
    assert (code, err) == (0, "")
    partitions = zk.get_topic_assignments(["t"]).found["t"].partitions
    assert len(partitions) == 12
    for partition, assignment in partitions.items():
        assert {_RACKS[b] for b in assignment.replicas} == {"a", "b"}, partition


def test_create_refuses_racks_known_for_only_some_brokers(
    zk_client: KazooClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Broker 3 has no rack: Kafka refuses to guess unless told to ignore racks, and then
    assigns over every broker."""
    zk = register_brokers(zk_client, (1, 2, 3), {1: "a", 2: "b"})
    args = ["--topic", "t", "--partitions", "3", "--replication-factor", "2"]
    code, _, err = run(capsys, "topics", "create", "--zk", zk_connect, *args)
    assert code == 1
    assert "--disable-rack-aware" in err
    assert zk.get_all_topics() == set()
    code, _, err = run(
        capsys, "topics", "create", "--zk", zk_connect, *args, "--disable-rack-aware"
    )
    assert (code, err) == (0, "")
    assert len(zk.get_topic_assignments(["t"]).found["t"].partitions) == 3
