"""A stopped broker's replicas read from its files (`chaos.run.audit_files`), with a fake
container whose data directory is a real partition log streamed as docker's archive API
streams it: the run's topic's logs are copied out and audited by the broker's offline tool
(a child process) with the digests the broker itself computes; other topics are left in
the container; a container that runs is not read.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from broker_node.replica_audit import audit_log
from broker_node.storage import PartitionLog
from chaos.run.audit_files import FilesUnread, audit_from_files

DATA_DIR = "/var/lib/testbed/data"


class StoppedBroker:
    """Broker 2 (`broker2`), in docker state `state`, whose data directory is `root`."""

    def __init__(self, root: Path, state: str = "exited") -> None:
        self.root = root
        self.state = state
        self.copied: list[str] = []

    def brokers(self) -> dict[int, str]:
        return {2: "broker2"}

    def status(self, service: str) -> str:
        return self.state

    def inspect(self, service: str) -> Mapping[str, Any]:
        return {"Config": {"Env": [f"DATA_DIR={DATA_DIR}", "BROKER_ID=2"]}}

    def copy_out(self, service: str, path: str) -> Iterator[bytes]:
        self.copied.append(path)
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as tar:
            tar.add(self.root, arcname=Path(path).name)
        data = out.getvalue()
        return iter([data[i : i + 4096] for i in range(0, len(data), 4096)])


def log_of(directory: Path, values: list[bytes]) -> tuple[Any, ...]:
    """A log led at epoch 3 holding `values`; its audit (epochs, offsets)."""
    log = PartitionLog(directory)
    log.append_as_leader([(b"k", v, 1) for v in values], 3)
    audited = audit_log(log), log.offsets()
    log.close()
    return audited


def test_the_topics_logs_are_read_with_the_brokers_digests(tmp_path: Path) -> None:
    expected = log_of(tmp_path / "data" / "t-0", [b"a", b"b", b"c"])
    log_of(tmp_path / "data" / "other-0", [b"x"])
    container = StoppedBroker(tmp_path / "data")
    answer = audit_from_files(container, 2, "t")
    assert container.copied == [DATA_DIR]
    [replica] = answer.replicas
    assert (answer.broker_id, replica.topic, replica.partition) == (2, "t", 0)
    offsets = (replica.log_start_offset, replica.log_end_offset, replica.high_watermark)
    assert (replica.epochs, offsets) == expected
    assert (replica.leader, replica.leader_epoch) == (-1, -1)


def test_a_broker_without_the_topic_has_no_replicas(tmp_path: Path) -> None:
    log_of(tmp_path / "data" / "other-0", [b"x"])
    assert audit_from_files(StoppedBroker(tmp_path / "data"), 2, "t").replicas == ()


def test_a_running_or_unknown_broker_is_not_read(tmp_path: Path) -> None:
    running = StoppedBroker(tmp_path, state="running")
    with pytest.raises(FilesUnread, match="broker2 is running, not stopped"):
        audit_from_files(running, 2, "t")
    assert running.copied == []
    with pytest.raises(FilesUnread, match="no container of broker 7"):
        audit_from_files(running, 7, "t")
