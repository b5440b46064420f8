"""`testbed configs` and the config checks of `testbed topics create` against a real
ensemble: describe and alter read and write `/config/topics/T`, each alter announces itself
with one `/config/changes/config_change_<seq>`, and every refused request leaves both
alone. No broker runs: topics are created straight through `KafkaZkClient`."""

from __future__ import annotations

import json

import pytest
from cli_runner import register_brokers, run
from kazoo.client import KazooClient

from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment, TopicConfig

pytestmark = pytest.mark.integration


@pytest.fixture
def zk(zk_client: KazooClient) -> KafkaZkClient:
    """Kafka's persistent paths, broker 1 registered, and two topics: `t` with
    `retention.ms=1000`, `bare` without overrides."""
    client = register_brokers(zk_client, [1])
    one = TopicAssignment({0: ReplicaAssignment((1,))})
    client.create_topic("t", one, TopicConfig({"retention.ms": "1000"}))
    client.create_topic("bare", one)
    return client


def _configs(zk_connect: str, *argv: str) -> list[str]:
    return ["configs", "--zk", zk_connect, "--entity-type", "topics", *argv]


def _changes(zk_client: KazooClient) -> list[str]:
    return sorted(zk_client.get_children(paths.CONFIG_CHANGES))


def _stored(zk_client: KazooClient, topic: str) -> dict[str, object]:
    data, _ = zk_client.get(paths.topic_config(topic))
    stored: dict[str, object] = json.loads(data)
    return stored


# -- describe -----------------------------------------------------------------------------


def test_describe_one_topic(
    zk: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """One line, Kafka's format; a topic without `/config/topics/T` has no override."""
    code, out, err = run(capsys, *_configs(zk_connect, "--entity-name", "t", "--describe"))
    assert (code, out, err) == (0, "Configs for topic 't' are retention.ms=1000\n", "")
    code, out, _ = run(capsys, *_configs(zk_connect, "--entity-name", "bare", "--describe"))
    assert (code, out) == (0, "Configs for topic 'bare' are \n")


def test_describe_every_topic_sorted(
    zk: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --entity-name every topic of `/brokers/topics` gets a line, sorted."""
    code, out, _ = run(capsys, *_configs(zk_connect, "--describe"))
    assert code == 0
    assert out.splitlines() == [
        "Configs for topic 'bare' are ",
        "Configs for topic 't' are retention.ms=1000",
    ]


def test_describe_without_topics_prints_nothing(
    zk_client: KazooClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, *_configs(zk_connect, "--describe")) == (0, "", "")


def test_describing_an_unknown_topic_fails(
    zk: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *_configs(zk_connect, "--entity-name", "nope", "--describe"))
    assert (code, out, err) == (1, "", "Error: Topic 'nope' does not exist\n")


# -- alter --------------------------------------------------------------------------------


def test_alter_rewrites_the_overrides_and_announces_each_change(
    zk: KafkaZkClient,
    zk_client: KazooClient,
    zk_connect: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Setup: `t` with retention.ms=1000, no notification yet.
    Steps: add two overrides and replace one; then delete one and add another.
    Validate: after each alter, `/config/topics/t` holds the merged overrides, one more
    version-2 notification names `topics/t`, and describe shows the result."""
    assert _changes(zk_client) == []
    code, out, err = run(
        capsys,
        *_configs(
            zk_connect,
            "--entity-name",
            "t",
            "--alter",
            "--add-config",
            "min.insync.replicas=2,retention.ms=5000",
            "--add-config",
            "unclean.leader.election.enable=true",
        ),
    )
    assert (code, out, err) == (0, "Completed updating config for topic t.\n", "")
    assert _stored(zk_client, "t") == {
        "version": 1,
        "config": {
            "min.insync.replicas": "2",
            "retention.ms": "5000",
            "unclean.leader.election.enable": "true",
        },
    }
    first = _changes(zk_client)
    assert len(first) == 1
    assert first[0].startswith("config_change_")

    code, out, _ = run(
        capsys,
        *_configs(
            zk_connect,
            "--entity-name",
            "t",
            "--alter",
            "--delete-config",
            "retention.ms,unclean.leader.election.enable",
            "--add-config",
            "cleanup.policy=compact",
        ),
    )
    assert (code, out) == (0, "Completed updating config for topic t.\n")
    assert zk.get_topic_configs(["t"]).found["t"].config == {
        "cleanup.policy": "compact",
        "min.insync.replicas": "2",
    }
    changes = _changes(zk_client)
    assert len(changes) == 2
    assert changes[0] == first[0]
    for child in changes:
        data, _ = zk_client.get(paths.config_change_notification(child))
        assert json.loads(data) == {"version": 2, "entity_path": "topics/t"}

    code, out, _ = run(capsys, *_configs(zk_connect, "--entity-name", "t", "--describe"))
    assert out == "Configs for topic 't' are cleanup.policy=compact,min.insync.replicas=2\n"


def test_alter_creates_the_config_znode_of_a_topic_without_one(
    zk: KafkaZkClient,
    zk_client: KazooClient,
    zk_connect: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = _configs(zk_connect, "--entity-name", "bare", "--alter", "--add-config", "segment.ms=1")
    assert run(capsys, *argv)[0] == 0
    assert _stored(zk_client, "bare") == {"version": 1, "config": {"segment.ms": "1"}}
    (child,) = _changes(zk_client)
    data, _ = zk_client.get(paths.config_change_notification(child))
    assert json.loads(data) == {"version": 2, "entity_path": "topics/bare"}


def test_deleting_the_last_override_leaves_an_empty_config(
    zk: KafkaZkClient,
    zk_client: KazooClient,
    zk_connect: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = _configs(zk_connect, "--entity-name", "t", "--alter", "--delete-config", "retention.ms")
    assert run(capsys, *argv)[0] == 0
    assert _stored(zk_client, "t") == {"version": 1, "config": {}}
    assert len(_changes(zk_client)) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["--entity-name", "nope", "--alter", "--add-config", "retention.ms=1"],
            "Topic 'nope' does not exist",
            id="unknown-topic",
        ),
        pytest.param(
            ["--entity-name", "t", "--alter", "--delete-config", "segment.ms,retention.ms"],
            "Invalid config(s): segment.ms",
            id="delete-not-set",
        ),
        pytest.param(
            ["--entity-name", "t", "--alter", "--add-config", "retention.msec=1"],
            "Unknown topic config name: retention.msec",
            id="unknown-config-name",
        ),
        pytest.param(
            ["--entity-name", "t", "--alter", "--add-config", "min.insync.replicas=0"],
            "Invalid value 0 for configuration min.insync.replicas",
            id="bad-min-insync-replicas",
        ),
        pytest.param(
            ["--entity-name", "t", "--alter", "--add-config", "unclean.leader.election.enable=1"],
            "Invalid value 1 for configuration unclean.leader.election.enable",
            id="bad-unclean-leader-election",
        ),
        pytest.param(
            ["--entity-name", "t", "--alter"],
            "--alter needs --add-config or --delete-config",
            id="nothing-to-alter",
        ),
        pytest.param(
            ["--alter", "--add-config", "retention.ms=1"],
            "--alter needs --entity-name",
            id="alter-without-name",
        ),
        pytest.param(
            ["--entity-name", "t", "--alter", "--add-config", "retention.ms"],
            "Invalid config 'retention.ms' in --add-config 'retention.ms': expected key=value",
            id="add-without-equals",
        ),
        pytest.param(
            ["--entity-name", "t", "--alter", "--add-config", "=1"],
            "Invalid config '=1' in --add-config '=1': expected key=value",
            id="add-with-empty-key",
        ),
        pytest.param(
            ["--entity-name", "t", "--alter", "--delete-config", "retention.ms,"],
            "Invalid --delete-config 'retention.ms,': expected config names separated by ','",
            id="delete-with-empty-name",
        ),
        pytest.param(
            ["--entity-name", "t", "--describe", "--add-config", "retention.ms=1"],
            "--add-config and --delete-config need --alter",
            id="describe-with-add",
        ),
    ],
)
def test_refused_requests_write_nothing(
    zk: KafkaZkClient,
    zk_client: KazooClient,
    zk_connect: str,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    """Each exits 1 with one `Error:` line; `/config/topics/t` keeps its data and version
    and no notification appears."""
    before = zk_client.get(paths.topic_config("t"))
    code, out, err = run(capsys, *_configs(zk_connect, *argv))
    assert (code, out) == (1, "")
    assert err.startswith(f"Error: {message}")
    assert err.count("\n") == 1
    after = zk_client.get(paths.topic_config("t"))
    assert (after[0], after[1].version) == (before[0], before[1].version)
    assert _changes(zk_client) == []
    assert sorted(zk_client.get_children(paths.CONFIG_TOPICS)) == ["t"]


def test_a_config_znode_that_does_not_decode_is_reported_and_kept(
    zk: KafkaZkClient,
    zk_client: KazooClient,
    zk_connect: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """describe and alter both name the znode; alter does not overwrite it."""
    zk_client.set(paths.topic_config("t"), b'{"version":1,"config":{"retention.ms":1}}')
    for argv in (
        ["--entity-name", "t", "--describe"],
        ["--describe"],
        ["--entity-name", "t", "--alter", "--add-config", "segment.ms=1"],
    ):
        code, out, err = run(capsys, *_configs(zk_connect, *argv))
        assert (code, out) == (1, "")
        assert err.startswith(f"Error: {paths.topic_config('t')}: ")
    data, _ = zk_client.get(paths.topic_config("t"))
    assert data == b'{"version":1,"config":{"retention.ms":1}}'
    assert _changes(zk_client) == []


def test_help_and_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    """--help exits 0 and says only topics are supported; argparse's refusals exit 2."""
    code, out, _ = run(capsys, "configs", "--help")
    assert code == 0
    assert out.startswith("usage: testbed configs")
    assert "Only topics" in " ".join(out.split())
    for argv in (
        ["configs", "--entity-type", "brokers", "--entity-name", "1", "--describe"],
        ["configs", "--entity-type", "topics"],
        ["configs", "--entity-type", "topics", "--describe", "--alter"],
    ):
        code, _, err = run(capsys, *argv)
        assert code == 2
        assert "usage:" in err


# -- topics create ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param("retention.msec=1", "Unknown topic config name: retention.msec", id="name"),
        pytest.param(
            "min.insync.replicas=none",
            "Invalid value none for configuration min.insync.replicas",
            id="min-isr",
        ),
        pytest.param(
            "unclean.leader.election.enable=maybe",
            "Invalid value maybe for configuration unclean.leader.election.enable",
            id="unclean",
        ),
    ],
)
def test_topics_create_refuses_a_config_kafka_would_refuse(
    zk: KafkaZkClient,
    zk_client: KazooClient,
    zk_connect: str,
    capsys: pytest.CaptureFixture[str],
    config: str,
    message: str,
) -> None:
    """Exit 1 and neither `/brokers/topics/new` nor `/config/topics/new` is written."""
    code, out, err = run(
        capsys,
        "topics",
        "create",
        "--zk",
        zk_connect,
        "--topic",
        "new",
        "--replica-assignment",
        "1",
        "--config",
        "retention.ms=1",
        "--config",
        config,
    )
    assert (code, out) == (1, "")
    assert err.startswith(f"Error: {message}")
    assert sorted(zk_client.get_children(paths.BROKER_TOPICS)) == ["bare", "t"]
    assert sorted(zk_client.get_children(paths.CONFIG_TOPICS)) == ["t"]


def test_topics_create_accepts_kafka_config_names(
    zk: KafkaZkClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys,
        "topics",
        "create",
        "--zk",
        zk_connect,
        "--topic",
        "new",
        "--replica-assignment",
        "1",
        "--config",
        "retention.ms=1",
        "--config",
        "min.insync.replicas=1",
    )
    assert (code, out) == (0, "Created topic new.\n")
    code, out, _ = run(capsys, *_configs(zk_connect, "--entity-name", "new", "--describe"))
    assert out == "Configs for topic 'new' are min.insync.replicas=1,retention.ms=1\n"
