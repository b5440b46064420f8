"""The offline audit of a copied data directory (`broker_node.log_dir_audit`): each
`<topic>-<partition>` log of the topics asked is audited as the running broker audits it
(the same epochs and digests), without leadership; other directories and files are left
alone, a log that cannot be opened is named in its replica's error, and the command line
prints the response in the JSON mapping `rpc.wire` reads back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_node.log_dir_audit import UNKNOWN, audit_directory, main, partition_of
from broker_node.replica_audit import audit_log
from broker_node.storage import PartitionLog
from broker_node.storage.checkpoints import HW_CHECKPOINT
from domain import TopicPartition
from rpc.wire import replica_audit_response_from_json

TS = 1_700_000_000_000


def write_log(directory: Path, epochs: dict[int, list[bytes]]) -> PartitionLog:
    """A log in `directory` led through `epochs` (epoch -> values), left open."""
    log = PartitionLog(directory)
    for epoch, values in epochs.items():
        log.append_as_leader([(b"k", v, TS) for v in values], epoch)
    return log


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("t-0", TopicPartition("t", 0)),
        ("a-b-12", TopicPartition("a-b", 12)),
        ("t-", None),
        ("t-x", None),
        ("lost+found", None),
    ],
)
def test_a_log_directory_is_named_after_its_partition(
    name: str, expected: TopicPartition | None
) -> None:
    assert partition_of(name) == expected


def test_the_topics_logs_are_audited_as_the_broker_audits_them(tmp_path: Path) -> None:
    log = write_log(tmp_path / "t-1", {1: [b"a", b"b"], 3: [b"c"]})
    expected = audit_log(log), log.offsets()
    log.close()
    write_log(tmp_path / "t-0", {2: [b"z"]}).close()
    write_log(tmp_path / "other-0", {1: [b"o"]}).close()
    (tmp_path / "meta.properties").write_text("x")
    answer = audit_directory(tmp_path, 2, ("t",))
    assert answer.broker_id == 2
    assert [(r.topic, r.partition) for r in answer.replicas] == [("t", 0), ("t", 1)]
    one = answer.replicas[1]
    assert (one.epochs, (one.log_start_offset, one.log_end_offset, one.high_watermark)) == expected
    assert (one.leader, one.leader_epoch, one.error_message) == (UNKNOWN, UNKNOWN, "")
    assert len(audit_directory(tmp_path, 2).replicas) == 3  # no topic: every log


def test_a_log_that_cannot_be_opened_is_named_in_its_error(tmp_path: Path) -> None:
    write_log(tmp_path / "t-0", {1: [b"a"]}).close()
    (tmp_path / "t-0" / HW_CHECKPOINT).write_text("not a checkpoint\n")
    [replica] = audit_directory(tmp_path, 1, ("t",)).replicas
    assert replica.error_message.startswith("CorruptLogError")
    assert replica.epochs == ()


def test_the_command_prints_the_response_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_log(tmp_path / "t-0", {1: [b"a"]}).close()
    assert main([str(tmp_path), "--broker", "3", "--topic", "t"]) == 0
    printed = replica_audit_response_from_json(capsys.readouterr().out)
    assert printed == audit_directory(tmp_path, 3, ("t",))
    assert main([str(tmp_path / "missing"), "--broker", "3"]) == 2
