"""The runner's replica audit (`chaos.run.audit.write_audit`) with a fake in place of the
brokers: every answer becomes rows of `audit.json`, a broker that did not answer is named
under `unreachable` (or, with a reader of files, read from its files and marked so), and
the replicas' disagreements are written beside them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from chaos.run.audit import write_audit
from chaos.run.audit_files import FilesUnread
from client.errors import TransportError
from rpc import messages as m
from rpc.errors import RpcError
from rpc.wire import ChannelIdentity
from rundir.audit import FROM_FILES, FROM_RPC
from rundir.layout import RunDir


def answer(broker: int, digest: str) -> m.ReplicaAuditResponse:
    """Broker `broker` holds t-0 offsets 0..3 of epoch 1 with `digest`."""
    return m.ReplicaAuditResponse(
        broker, (m.AuditedReplica("t", 0, 1, 1, 0, 3, 3, (m.AuditedEpoch(1, 0, 3, digest),)),)
    )


def test_write_audit_records_answers_silence_and_disagreements(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path).create()
    asked: list[tuple[str, ...]] = []

    def fake(
        addresses: Mapping[int, str], topics: tuple[str, ...], tls: ChannelIdentity | None
    ) -> dict[int, m.ReplicaAuditResponse | TransportError]:
        asked.append(topics)
        return {
            1: answer(1, "same"),
            2: answer(2, "changed"),
            3: TransportError(RpcError("b3:9092", "UNAVAILABLE", "refused")),
        }

    write_audit(run_dir, "t", {1: "b1", 2: "b2", 3: "b3"}, None, fake)
    document = json.loads(run_dir.audit.read_text(encoding="utf-8"))
    assert asked == [("t",)]
    assert [(r["broker"], r["epochs"]) for r in document["replicas"]] == [
        (1, [[1, 0, 3, "same"]]),
        (2, [[1, 0, 3, "changed"]]),
    ]
    assert list(document["unreachable"]) == ["3"]
    [differ] = document["disagreements"]
    assert (differ["partition"], differ["leader_epoch"], differ["kind"]) == (0, 1, "digest")


def test_a_broker_that_did_not_answer_or_has_no_address_is_read_from_its_files(
    tmp_path: Path,
) -> None:
    run_dir = RunDir(tmp_path).create()
    read: list[int] = []

    def fake(
        addresses: Mapping[int, str], topics: tuple[str, ...], tls: ChannelIdentity | None
    ) -> dict[int, m.ReplicaAuditResponse | TransportError]:
        return {
            1: answer(1, "same"),
            2: TransportError(RpcError("b2:9092", "UNAVAILABLE", "refused")),
        }

    def files(broker: int) -> m.ReplicaAuditResponse:
        read.append(broker)
        if broker == 3:
            raise FilesUnread("broker3 is running, not stopped")
        return answer(broker, "changed")

    write_audit(run_dir, "t", {1: "b1", 2: "b2"}, None, fake, files, brokers=(1, 2, 3))
    document = json.loads(run_dir.audit.read_text(encoding="utf-8"))
    assert read == [2, 3]
    assert [(r["broker"], r["source"]) for r in document["replicas"]] == [
        (1, FROM_RPC),
        (2, FROM_FILES),
    ]
    assert document["unreachable"] == {
        "3": "no published port; its files: broker3 is running, not stopped"
    }
    [differ] = document["disagreements"]
    assert (differ["kind"], differ["replicas"]["2"]) == ("digest", [0, 3, "changed"])
