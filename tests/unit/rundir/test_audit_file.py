"""`audit.json` (`rundir.audit`): rows round-trip, and the replicas of a partition are
compared epoch by epoch: the same offsets with another digest is a `digest` disagreement
(log matching broken), other offsets or a missing epoch a `range` one; agreeing replicas,
a lone replica and an unreadable one are none. A row says whether it came over RPC or
from a stopped broker's files.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from rundir.audit import (
    AUDIT_VERSION,
    FROM_FILES,
    FROM_RPC,
    AuditedRange,
    ReplicaReport,
    audit_document,
    disagreements,
    read_audit,
)
from rundir.errors import RunDirError

E1 = AuditedRange(1, 0, 5, "d1")
E2 = AuditedRange(2, 5, 9, "d2")


def replica(broker: int, *epochs: AuditedRange, error: str = "") -> ReplicaReport:
    """Broker `broker`'s replica of t-0 holding `epochs`."""
    end = epochs[-1].end_offset if epochs else 0
    return ReplicaReport(broker, "t", 0, 1, 2, 0, end, end, epochs, error)


def test_agreeing_replicas_have_no_disagreement() -> None:
    assert disagreements([replica(1, E1, E2), replica(2, E1, E2), replica(3, E1, E2)]) == []


def test_the_same_offsets_with_another_digest_is_a_digest_disagreement() -> None:
    changed = AuditedRange(2, 5, 9, "other")
    [found] = disagreements([replica(1, E1, E2), replica(2, E1, changed), replica(3, E1, E2)])
    assert (found.topic, found.partition, found.leader_epoch, found.kind) == ("t", 0, 2, "digest")
    assert found.replicas == {1: [5, 9, "d2"], 2: [5, 9, "other"], 3: [5, 9, "d2"]}


def test_a_shorter_or_missing_epoch_is_a_range_disagreement() -> None:
    short = AuditedRange(2, 5, 7, "d2-short")
    found = disagreements([replica(1, E1, E2), replica(2, E1, short), replica(3, E1)])
    assert [(d.leader_epoch, d.kind) for d in found] == [(2, "range")]
    assert found[0].replicas[3] is None


def test_a_lone_or_unreadable_replica_is_not_compared() -> None:
    changed = AuditedRange(1, 0, 5, "other")
    assert disagreements([replica(1, E1), replica(2, changed, error="LogError: closed")]) == []


def test_the_document_round_trips(tmp_path: Path) -> None:
    rows = [replica(2, E1, E2), replica(1, E1)]
    document = audit_document("t", 123, rows, {3: "UNAVAILABLE from b3:9092"})
    assert document["version"] == AUDIT_VERSION
    assert [r["broker"] for r in document["replicas"]] == [1, 2]
    assert document["unreachable"] == {"3": "UNAVAILABLE from b3:9092"}
    assert [d["leader_epoch"] for d in document["disagreements"]] == [2]
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert read_audit(path) == [replica(1, E1), replica(2, E1, E2)]


def test_a_row_read_from_files_says_so_and_an_older_row_came_over_rpc(tmp_path: Path) -> None:
    files = dataclasses.replace(replica(2, E1), leader=-1, leader_epoch=-1, source=FROM_FILES)
    document = audit_document("t", 123, [replica(1, E1), files], {})
    assert [r["source"] for r in document["replicas"]] == [FROM_RPC, FROM_FILES]
    del document["replicas"][0]["source"]  # as written before rows had a source
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert read_audit(path) == [replica(1, E1), files]


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        json.dumps([]),
        json.dumps({"version": 99}),
        json.dumps({"version": 1, "replicas": [{}]}),
    ],
)
def test_an_unreadable_audit_is_a_run_dir_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "audit.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(RunDirError):
        read_audit(path)
