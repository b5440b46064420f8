"""`python -m broker_node.log_dir_audit DIR --broker N [--topic T ...]`: the replica audit of
the partition logs in a copy of a broker's data directory, for a broker that cannot answer
ReplicaAudit itself (its container is stopped). Like Kafka's `kafka-dump-log`, it reads the
files with the broker's own storage code (`broker_node.storage`, digests by
`broker_node.replica_audit`) and prints the same ReplicaAuditResponse a running broker
would send, in protobuf's JSON mapping (`rpc.wire.replica_audit_response_to_json`).

A partition's log directory is named `<topic>-<partition>`, as `ReplicaManager` names it.
Opening a log recovers it as the broker does at start (a torn tail is cut, a missing
checkpoint rebuilt), so DIR must be a copy. Files hold no leadership: every replica's
`leader` and `leader_epoch` are `UNKNOWN` (-1). A log that cannot be opened or read is
named in its replica's `error_message`.

Runs as its own short process, on its main thread.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from broker_node.replica_audit import audit_log
from broker_node.storage import LogError, PartitionLog
from domain import TopicPartition
from rpc import messages as m
from rpc.wire import replica_audit_response_to_json

#: The leader and leader epoch of a replica read from files: not known.
UNKNOWN = -1

_LOG_DIR = re.compile(r"(?P<topic>.+)-(?P<partition>\d+)")


def partition_of(name: str) -> TopicPartition | None:
    """The partition whose log directory is called `name`; None for any other name."""
    found = _LOG_DIR.fullmatch(name)
    if found is None:
        return None
    return TopicPartition(found["topic"], int(found["partition"]))


def audit_replica(tp: TopicPartition, directory: Path) -> m.AuditedReplica:
    """The audit of the log in `directory` (opened, recovered, read and closed)."""
    try:
        log = PartitionLog(directory)
        try:
            start, end, hw = log.offsets()
            epochs = audit_log(log)
        finally:
            log.close()
    except (LogError, OSError) as exc:
        return m.AuditedReplica(
            tp.topic,
            tp.partition,
            UNKNOWN,
            UNKNOWN,
            -1,
            -1,
            -1,
            error_message=f"{type(exc).__name__}: {exc}",
        )
    return m.AuditedReplica(tp.topic, tp.partition, UNKNOWN, UNKNOWN, start, end, hw, epochs)


def audit_directory(
    data_dir: Path, broker_id: int, topics: Sequence[str] = ()
) -> m.ReplicaAuditResponse:
    """Every partition log in `data_dir` of `topics` (all when empty), by topic and
    partition."""
    found = []
    for child in data_dir.iterdir() if data_dir.is_dir() else ():
        tp = partition_of(child.name)
        if tp is not None and child.is_dir() and (not topics or tp.topic in topics):
            found.append((tp, child))
    found.sort(key=lambda item: (item[0].topic, item[0].partition))
    return m.ReplicaAuditResponse(broker_id, tuple(audit_replica(tp, d) for tp, d in found))


def main(argv: Sequence[str] | None = None) -> int:
    """Print the audit of DIR; exit 2 when DIR is not a directory."""
    parser = argparse.ArgumentParser(prog="python -m broker_node.log_dir_audit")
    parser.add_argument("data_dir", type=Path, help="a copy of a broker's data directory")
    parser.add_argument("--broker", type=int, required=True, help="the broker's id")
    parser.add_argument("--topic", action="append", default=[], help="only this topic")
    args = parser.parse_args(argv)
    if not args.data_dir.is_dir():
        print(f"{args.data_dir}: not a directory", file=sys.stderr)
        return 2
    answer = audit_directory(args.data_dir, args.broker, tuple(args.topic))
    print(replica_audit_response_to_json(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
