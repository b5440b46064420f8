"""`testbed reassign` against a real ensemble, with fake broker registrations and no
controller: generate proposes without writing; execute writes exactly the file to
`/admin/reassign_partitions` or, on any problem, nothing; verify tells in progress,
complete and failed apart through its exit code (0, 3, 1)."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from cli_runner import register_brokers, run
from kazoo.client import KazooClient

from domain import TopicPartition
from testbed.reassign import parse_reassignment
from testbed.reassign_verify import (
    PartitionStatus,
    ReassignmentStatus,
    verify,
    wait_for_reassignment,
)
from zkdata import paths
from zkdata.admin_znodes import ReassignPartitionsZNode
from zkdata.client import KafkaZkClient
from zkdata.model import PartitionReassignment, ReplicaAssignment, TopicAssignment
from zkdata.reassignment import ReassignmentZk

pytestmark = pytest.mark.integration

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


@pytest.fixture
def zk(zk_client: KazooClient) -> KafkaZkClient:
    """Brokers 1-3 registered by this test's session, and topic `t` with partitions 0 on
    [1,2] and 1 on [2,3]."""
    client = register_brokers(zk_client)
    client.create_topic("t", _topic({0: (1, 2), 1: (2, 3)}))
    return client


def _topic(replicas: dict[int, tuple[int, ...]]) -> TopicAssignment:
    return TopicAssignment({p: ReplicaAssignment(r) for p, r in replicas.items()})


def generate(
    capsys: pytest.CaptureFixture[str], zk_connect: str, topics: str, brokers: str, *extra: str
) -> tuple[int, str, str]:
    """`testbed reassign generate` with a topics file, a broker list and `extra` options."""
    argv = ["--zk", zk_connect, "--topics-to-move-json-file", topics, "--broker-list", brokers]
    return run(capsys, "reassign", "generate", *argv, *extra)


def write(tmp_path: Path, content: object) -> str:
    """`content` as a JSON file (a string is written as it is); returns its path."""
    path = tmp_path / "input.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def reassignment(*entries: tuple[str, int, list[int]]) -> dict[str, Any]:
    """A reassignment file's content."""
    return {
        "version": 1,
        "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in entries],
    }


def request_znode(zk_client: KazooClient) -> bytes | None:
    """The data of `/admin/reassign_partitions`, or None when it does not exist."""
    if zk_client.exists(paths.REASSIGN_PARTITIONS) is None:
        return None
    data: bytes = zk_client.get(paths.REASSIGN_PARTITIONS)[0]
    return data


# -- generate -----------------------------------------------------------------------------


def test_generate_proposes_over_the_listed_brokers_and_writes_nothing(
    zk: KafkaZkClient,
    zk_client: KazooClient,
    zk_connect: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The current assignment is printed as it is; the proposal keeps the partitions and the
    replication factor and uses only --broker-list."""
    zk.create_topic("u", _topic({0: (1,), 1: (2,), 2: (3,)}))
    topics = write(tmp_path, {"version": 1, "topics": [{"topic": "t"}, {"topic": "u"}]})
    code, out, err = generate(capsys, zk_connect, topics, "2,3")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "Current partition replica assignment"
    assert (lines[2], lines[3]) == ("", "Proposed partition reassignment configuration")
    current = {r.topic_partition: r.replicas for r in parse_reassignment(lines[1])}
    assert current == {
        T0: (1, 2),
        T1: (2, 3),
        TopicPartition("u", 0): (1,),
        TopicPartition("u", 1): (2,),
        TopicPartition("u", 2): (3,),
    }
    proposed = {r.topic_partition: r.replicas for r in parse_reassignment(lines[4])}
    assert sorted(proposed) == sorted(current)
    for tp, replicas in proposed.items():
        assert len(replicas) == len(current[tp])
        assert set(replicas) <= {2, 3}
        assert len(set(replicas)) == len(replicas)
    assert request_znode(zk_client) is None


@pytest.mark.parametrize(
    ("topics", "brokers", "message"),
    [
        pytest.param(
            {"topics": [{"topic": "nope"}]}, "1,2", "Topic 'nope' does not exist", id="unknown"
        ),
        pytest.param("{oops", "1,2", "not JSON", id="bad-json"),
        pytest.param({"topics": []}, "1,2", "'topics' is empty", id="no-topics"),
        pytest.param({"topics": [{"topic": "t"}]}, "1,x", "comma-separated", id="not-integers"),
        pytest.param({"topics": [{"topic": "t"}]}, "1,2,1", "[1] twice", id="repeated-broker"),
        pytest.param(
            {"topics": [{"topic": "t"}]},
            "1,9",
            "broker(s) [9] of --broker-list are not registered",
            id="unregistered-broker",
        ),
        pytest.param(
            {"topics": [{"topic": "t"}]},
            "3",
            "topic t: Replication factor: 2 larger than available brokers: 1.",
            id="replication-factor-above-broker-list",
        ),
    ],
)
def test_generate_errors_exit_1(
    zk: KafkaZkClient,
    zk_connect: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    topics: object,
    brokers: str,
    message: str,
) -> None:
    """Each problem is one `Error:` message on stderr and nothing on stdout."""
    path = write(tmp_path, topics)
    code, out, err = generate(capsys, zk_connect, path, brokers)
    assert (code, out) == (1, "")
    assert err.startswith("Error: ")
    assert message in err


def test_generate_is_rack_aware_and_can_ignore_racks(
    zk_client: KazooClient,
    zk_connect: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Brokers 4-7 on racks a, a, b, b: each proposed partition spans both racks. Broker 8
    has no rack, so listing it is refused unless --disable-rack-aware is given."""
    racks = {4: "a", 5: "a", 6: "b", 7: "b"}
    zk = register_brokers(zk_client, (4, 5, 6, 7, 8), racks)
    zk.create_topic("r", _topic({p: (4, 5) for p in range(12)}))
    topics = write(tmp_path, {"version": 1, "topics": [{"topic": "r"}]})
    code, out, err = generate(capsys, zk_connect, topics, "4,5,6,7")
    assert (code, err) == (0, "")
    proposed = parse_reassignment(out.splitlines()[4])
    assert len(proposed) == 12
    for request in proposed:
        assert {racks[b] for b in request.replicas} == {"a", "b"}, request
    code, out, err = generate(capsys, zk_connect, topics, "4,5,8")
    assert (code, out) == (1, "")
    assert "--disable-rack-aware" in err
    code, _, err = generate(capsys, zk_connect, topics, "4,5,8", "--disable-rack-aware")
    assert (code, err) == (0, "")
    assert request_znode(zk_client) is None


# -- execute ------------------------------------------------------------------------------


def test_execute_writes_the_file_and_prints_the_rollback(
    zk: KafkaZkClient,
    zk_client: KazooClient,
    zk_connect: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The request znode holds the file's partitions in the file's order; the printed
    rollback is the assignment before."""
    content = reassignment(("t", 1, [1, 2]), ("t", 0, [3, 1]))
    content["partitions"][0]["log_dirs"] = ["any", "any"]
    path = write(tmp_path, content)
    code, out, err = run(
        capsys, "reassign", "execute", "--zk", zk_connect, "--reassignment-json-file", path
    )
    assert (code, err) == (0, "")
    znode = request_znode(zk_client)
    assert znode is not None
    assert ReassignPartitionsZNode.decode(znode) == (
        PartitionReassignment(T1, (1, 2)),
        PartitionReassignment(T0, (3, 1)),
    )
    lines = out.splitlines()
    assert lines[:2] == ["Current partition replica assignment", ""]
    rollback = {r.topic_partition: r.replicas for r in parse_reassignment(lines[2])}
    assert rollback == {T0: (1, 2), T1: (2, 3)}
    assert lines[-1] == "Started the reassignment of partitions t-0,t-1."


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(
            reassignment(("nope", 0, [1])), "nope-0: topic nope does not exist", id="unknown-topic"
        ),
        pytest.param(
            reassignment(("t", 5, [1])), "t-5: topic t has no partition 5", id="unknown-partition"
        ),
        pytest.param(
            reassignment(("t", 0, [])), "t-0: the target replica list is empty", id="empty-target"
        ),
        pytest.param(
            reassignment(("t", 0, [2, 2])), "names broker(s) [2] twice", id="repeated-broker"
        ),
        pytest.param(
            reassignment(("t", 0, [1, 4])),
            "broker(s) [4] of the target [1,4] are not registered",
            id="unregistered-broker",
        ),
        pytest.param(
            reassignment(("t", 0, [1]), ("t", 1, [2]), ("t", 0, [3])),
            "t-0 is listed 2 times",
            id="partition-twice",
        ),
        pytest.param('{"version":1,"partitions":[{"topic":', "not JSON", id="bad-json"),
        pytest.param(reassignment(), "'partitions' is empty", id="no-partitions"),
        pytest.param(
            {
                "version": 1,
                "partitions": [
                    {"topic": "t", "partition": 0, "replicas": [3], "log_dirs": ["/var/kafka"]}
                ],
            },
            "log directories are not supported",
            id="log-dir",
        ),
    ],
)
def test_execute_refuses_bad_files_and_writes_nothing(
    zk: KafkaZkClient,
    zk_client: KazooClient,
    zk_connect: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: object,
    message: str,
) -> None:
    """Exit 1 with the problem named on stderr; no request znode, topic `t` unchanged."""
    path = write(tmp_path, content)
    code, out, err = run(
        capsys, "reassign", "execute", "--zk", zk_connect, "--reassignment-json-file", path
    )
    assert (code, out) == (1, "")
    assert err.startswith("Error: ")
    assert message in err
    assert request_znode(zk_client) is None
    assert zk.get_topic_assignments(["t"]).found["t"] == _topic({0: (1, 2), 1: (2, 3)})


def test_execute_names_a_missing_file(
    zk: KafkaZkClient, zk_connect: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file that cannot be read: exit 1 naming it."""
    missing = str(tmp_path / "missing.json")
    code, _, err = run(
        capsys, "reassign", "execute", "--zk", zk_connect, "--reassignment-json-file", missing
    )
    assert code == 1
    assert err.startswith(f"Error: cannot read {missing}")


def test_execute_refuses_while_a_reassignment_runs(
    zk: KafkaZkClient,
    zk_client: KazooClient,
    zk_connect: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An existing request is left exactly as it was."""
    ReassignmentZk(zk).create_reassignments([PartitionReassignment(T1, (3, 1))])
    before = request_znode(zk_client)
    path = write(tmp_path, reassignment(("t", 0, [3, 1])))
    code, out, err = run(
        capsys, "reassign", "execute", "--zk", zk_connect, "--reassignment-json-file", path
    )
    assert (code, out) == (1, "")
    assert "a partition reassignment is already running" in err
    assert request_znode(zk_client) == before


# -- verify -------------------------------------------------------------------------------


def _verify(
    capsys: pytest.CaptureFixture[str], zk_connect: str, path: str, *extra: str
) -> tuple[int, str, str]:
    return run(
        capsys,
        "reassign",
        "verify",
        "--zk",
        zk_connect,
        "--reassignment-json-file",
        path,
        *extra,
    )


def test_verify_reports_each_partition_and_exits_by_the_worst(
    zk: KafkaZkClient,
    zk_client: KazooClient,
    zk_connect: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Complete (replicas are the target, no request), failed (neither) and in progress
    (listed in the request): exit 1 while one failed; 3 when the rest is in progress; 0
    once the request is gone and every partition is complete."""
    ReassignmentZk(zk).create_reassignments([PartitionReassignment(T1, (3, 1))])
    mixed = write(tmp_path, reassignment(("t", 0, [1, 2]), ("t", 1, [3, 1]), ("t", 0, [3])))
    code, out, err = _verify(capsys, zk_connect, mixed)
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "Reassignment of partition t-0 is complete.",
        "Reassignment of partition t-1 is still in progress.",
        "Reassignment of partition t-0 failed: its replicas are [1,2], not the target [3].",
    ]
    code, out, _ = _verify(capsys, zk_connect, write(tmp_path, reassignment(("t", 1, [3, 1]))))
    assert (code, out) == (3, "Reassignment of partition t-1 is still in progress.\n")
    zk_client.delete(paths.REASSIGN_PARTITIONS)
    code, out, _ = _verify(capsys, zk_connect, write(tmp_path, reassignment(("t", 1, [2, 3]))))
    assert (code, out) == (0, "Reassignment of partition t-1 is complete.\n")


def test_verify_sees_a_move_in_the_topic_znode_as_in_progress(
    zk: KafkaZkClient, zk_connect: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Adding and removing replicas in `/brokers/topics/T` (no request left) mean in
    progress; an unknown partition has failed."""
    zk.create_topic("m", TopicAssignment({0: ReplicaAssignment((3, 1, 2), (3,), (2,))}))
    path = write(tmp_path, reassignment(("m", 0, [3, 1])))
    code, out, _ = _verify(capsys, zk_connect, path)
    assert (code, out) == (3, "Reassignment of partition m-0 is still in progress.\n")
    code, out, _ = _verify(capsys, zk_connect, write(tmp_path, reassignment(("gone", 0, [1]))))
    assert (code, out) == (
        1,
        "Reassignment of partition gone-0 failed: the partition does not exist.\n",
    )


def test_verify_wait_returns_at_once_when_nothing_is_in_progress(
    zk: KafkaZkClient, zk_connect: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --wait and a complete reassignment: one progress line, exit 0."""
    path = write(tmp_path, reassignment(("t", 0, [1, 2]), ("t", 1, [2, 3])))
    code, out, err = _verify(capsys, zk_connect, path, "--wait", "600")
    assert (code, err) == (0, "2 of 2 partitions reassigned\n")
    assert out.count("is complete.") == 2


def test_verify_wait_gives_up_with_exit_3(
    zk: KafkaZkClient, zk_connect: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A request no controller will ever carry out: still in progress after --wait."""
    ReassignmentZk(zk).create_reassignments([PartitionReassignment(T0, (3, 1))])
    path = write(tmp_path, reassignment(("t", 0, [3, 1])))
    code, out, err = _verify(capsys, zk_connect, path, "--wait", "0.6")
    assert (code, err) == (3, "0 of 1 partitions reassigned\n")
    assert out == "Reassignment of partition t-0 is still in progress.\n"


def test_waiting_follows_the_request_until_it_is_done(
    zk: KafkaZkClient, zk_client: KazooClient
) -> None:
    """Polling ZooKeeper: the request is removed (as the controller does once the move is
    complete) during the first pause; the next reading finds the partition complete."""
    zk.create_topic("d", _topic({0: (3, 1)}))
    requests = (PartitionReassignment(TopicPartition("d", 0), (3, 1)),)
    ReassignmentZk(zk).create_reassignments(requests)
    progress: list[tuple[int, int]] = []
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        zk_client.delete(paths.REASSIGN_PARTITIONS)

    statuses = wait_for_reassignment(
        lambda: verify(zk, requests),
        60.0,
        lambda done, total: progress.append((done, total)),
        pause,
    )
    assert statuses == (PartitionStatus(requests[0].topic_partition, ReassignmentStatus.COMPLETE),)
    assert progress == [(0, 1), (1, 1)]
    assert pauses == [0.5]


# -- common -------------------------------------------------------------------------------


def test_unreachable_zookeeper_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No server at the address: exit 1 with a message naming it, nothing on stdout (the
    three actions open their session the same way; execute stands for them)."""
    path = write(tmp_path, reassignment(("t", 0, [1])))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, err = run(
        capsys, "reassign", "execute", "--reassignment-json-file", path, "--zk", f"127.0.0.1:{port}"
    )
    assert (code, out) == (1, "")
    assert err == f"Error: cannot reach ZooKeeper at 127.0.0.1:{port}\n"


@pytest.mark.parametrize(
    "argv",
    [["reassign"], ["reassign", "generate"], ["reassign", "execute"], ["reassign", "verify"]],
)
def test_reassign_has_help(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    """--help prints usage and exits 0."""
    code, out, _ = run(capsys, *argv, "--help")
    assert code == 0
    assert out.startswith(f"usage: testbed {' '.join(argv)}")


@pytest.mark.parametrize(
    "argv",
    [
        ["reassign"],
        ["reassign", "cancel"],
        ["reassign", "generate", "--topics-to-move-json-file", "f.json"],
        ["reassign", "generate", "--broker-list", "1"],
        ["reassign", "execute"],
        ["reassign", "verify"],
        ["reassign", "verify", "--reassignment-json-file", "f.json", "--wait", "0"],
        ["reassign", "verify", "--reassignment-json-file", "f.json", "--wait", "soon"],
    ],
)
def test_bad_reassign_arguments_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    """argparse errors exit 2 with a usage line on stderr."""
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert "usage:" in err
