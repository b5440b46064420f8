"""`testbed reassign`: partition reassignment through ZooKeeper, as Kafka 2.x's
`kafka-reassign-partitions.sh --zookeeper` does it.

- generate: propose an assignment of whole topics over a list of brokers (Kafka's
  assignment, rack-aware when every listed broker has a rack), printing the current one
  beside it; nothing is written.
- execute: check a reassignment file against the cluster, then write it to
  `/admin/reassign_partitions` for the controller to carry out.
- verify: report each partition of a reassignment file as complete, in progress or failed
  (`testbed.reassign_verify`).

This module owns the two JSON files of the command: the topics to move
(`{"version":1,"topics":[{"topic":"t"}]}`) and the reassignment
(`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}`).
Parsing, proposing and checking are pure; `generate` and `execute` read ZooKeeper, and
`execute` writes the request. Everything blocks the calling thread (the CLI's main thread).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from admin import (
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    RackAwareMode,
    broker_racks,
    current_replicas,
    propose_assignment,
    reassignment_problems,
)
from domain import TopicPartition
from zkdata.admin_znodes import ReassignPartitionsZNode
from zkdata.client import KafkaZkClient
from zkdata.errors import ZnodeFormatError
from zkdata.model import PartitionReassignment, TopicAssignment
from zkdata.reassignment import ReassignmentInProgressError, ReassignmentZk

#: The only log directory the testbed knows: Kafka's "let the broker choose".
ANY_LOG_DIR = "any"

Assignment = Mapping[TopicPartition, Sequence[int]]


class ReassignCommandError(Exception):
    """A reassignment command that cannot be carried out; the message is for the user."""


# -- the JSON files -----------------------------------------------------------------------


def read_json_file(path: Path) -> str:
    """The text of `path`; `ReassignCommandError` when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReassignCommandError(f"cannot read {path}: {exc}") from None


def _load(text: str, source: str) -> dict[str, Any]:
    """The file's JSON object, after checking its version (1, or absent as Kafka allows)."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ReassignCommandError(f"{source}: not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise ReassignCommandError(f"{source}: expected a JSON object, got {type(obj).__name__}")
    version = obj.get("version", 1)
    if type(version) is not int or version != 1:
        raise ReassignCommandError(f"{source}: unsupported version {version!r} (supported: 1)")
    return obj


def _entries(obj: dict[str, Any], key: str, source: str) -> list[dict[str, Any]]:
    value = obj.get(key)
    if not isinstance(value, list):
        raise ReassignCommandError(f"{source}: {key!r} must be a list, got {value!r}")
    if not value:
        raise ReassignCommandError(f"{source}: {key!r} is empty")
    for entry in value:
        if not isinstance(entry, dict):
            raise ReassignCommandError(f"{source}: each of {key!r} must be an object: {entry!r}")
    return value


_KINDS = {str: "a string", int: "an integer", list: "a list"}


def _field(entry: dict[str, Any], key: str, kind: type, source: str) -> Any:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, kind):
        what = "missing" if key not in entry else f"not {_KINDS[kind]}: {value!r}"
        raise ReassignCommandError(f"{source}: {key!r} of {json.dumps(entry)} is {what}")
    return value


def parse_topics_to_move(text: str, source: str = "the topics file") -> tuple[str, ...]:
    """Kafka's `--topics-to-move-json-file`: `{"version":1,"topics":[{"topic":"t"}]}`; at least
    one topic, none twice."""
    obj = _load(text, source)
    topics = tuple(_field(e, "topic", str, source) for e in _entries(obj, "topics", source))
    repeated = sorted(t for t, n in Counter(topics).items() if n > 1)
    if repeated:
        raise ReassignCommandError(f"{source}: topic(s) {', '.join(repeated)} listed twice")
    return topics


def parse_reassignment(
    text: str, source: str = "the reassignment file"
) -> tuple[PartitionReassignment, ...]:
    """Kafka's `--reassignment-json-file`: `{"version":1,"partitions":[{"topic":"t",
    "partition":0,"replicas":[1,2]}]}`, in file order. An optional `log_dirs` must name
    `"any"` once per replica: the testbed's brokers have no log directories to choose."""
    obj = _load(text, source)
    out = []
    for entry in _entries(obj, "partitions", source):
        topic = _field(entry, "topic", str, source)
        partition = _field(entry, "partition", int, source)
        replicas = _field(entry, "replicas", list, source)
        if partition < 0 or any(isinstance(r, bool) or not isinstance(r, int) for r in replicas):
            raise ReassignCommandError(
                f"{source}: {json.dumps(entry)} needs a partition >= 0 and integer replicas"
            )
        if "log_dirs" in entry:
            log_dirs = entry["log_dirs"]
            if not isinstance(log_dirs, list) or len(log_dirs) != len(replicas):
                raise ReassignCommandError(
                    f"{source}: 'log_dirs' of {topic}-{partition} must have one entry per replica"
                )
            if any(d != ANY_LOG_DIR for d in log_dirs):
                raise ReassignCommandError(
                    f"{source}: log directories are not supported (partition {topic}-{partition}"
                    f' names {json.dumps(log_dirs)}); use "{ANY_LOG_DIR}" for every replica'
                )
        out.append(PartitionReassignment(TopicPartition(topic, partition), tuple(replicas)))
    return tuple(out)


def parse_broker_list(text: str) -> tuple[int, ...]:
    """Kafka's `--broker-list`: broker ids separated by commas (`1,2,3`), none twice."""
    try:
        brokers = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise ReassignCommandError(
            f"--broker-list {text!r} is not a comma-separated list of broker ids (1,2,3)"
        ) from None
    repeated = sorted(b for b, n in Counter(brokers).items() if n > 1)
    if repeated:
        raise ReassignCommandError(f"--broker-list names broker(s) {_ids(repeated)} twice")
    return brokers


def render_reassignment(assignment: Assignment) -> str:
    """A reassignment file as Kafka 2.x prints one: compact JSON, partitions sorted, a log
    directory of "any" per replica."""
    partitions = [
        {
            "topic": tp.topic,
            "partition": tp.partition,
            "replicas": list(replicas),
            "log_dirs": [ANY_LOG_DIR] * len(replicas),
        }
        for tp, replicas in sorted(assignment.items())
    ]
    return json.dumps({"version": 1, "partitions": partitions}, separators=(",", ":"))


# -- generate -----------------------------------------------------------------------------


def generate(
    zk: KafkaZkClient,
    topics: Sequence[str],
    brokers: Sequence[int],
    rng: random.Random | None = None,
    rack_aware: RackAwareMode = RackAwareMode.ENFORCED,
) -> tuple[dict[TopicPartition, tuple[int, ...]], dict[TopicPartition, tuple[int, ...]]]:
    """The current assignment of `topics` and a proposed one over `brokers`, which must all
    be registered: rack-aware when every one of them registered a rack, refused
    (`AdminOperationError`) when only some did unless `rack_aware` is DISABLED, as Kafka's
    tool decides. Reads ZooKeeper; writes nothing."""
    listing = zk.get_all_brokers().brokers
    registered = set(listing)
    absent = sorted(set(brokers) - registered)
    if absent:
        raise ReassignCommandError(
            f"broker(s) {_ids(absent)} of --broker-list are not registered; "
            f"registered brokers: {_ids(sorted(registered))}"
        )
    found = _read_topics(zk, topics)
    current = {
        TopicPartition(topic, p): current_replicas(a)
        for topic, assignment in found.items()
        for p, a in assignment.partitions.items()
    }
    try:
        racks = broker_racks(
            {b: broker.info.rack for b, broker in listing.items()}, rack_aware, brokers
        )
        return current, propose_assignment(found, racks, rng or random.Random())
    except (InvalidPartitionsError, InvalidReplicationFactorError) as exc:
        raise ReassignCommandError(str(exc)) from None


def render_proposal(current: Assignment, proposed: Assignment) -> str:
    """The output of `generate`: the current assignment, then the proposed one."""
    return "\n".join(
        [
            "Current partition replica assignment",
            render_reassignment(current),
            "",
            "Proposed partition reassignment configuration",
            render_reassignment(proposed),
        ]
    )


def _read_topics(zk: KafkaZkClient, topics: Iterable[str]) -> dict[str, TopicAssignment]:
    names = list(topics)
    reads = zk.get_topic_assignments(names)
    if reads.malformed:
        raise next(iter(reads.malformed.values()))
    missing = [t for t in names if t not in reads.found]
    if missing:
        raise ReassignCommandError(f"Topic {', '.join(repr(t) for t in missing)} does not exist")
    return reads.found


# -- execute ------------------------------------------------------------------------------


def execute(
    zk: KafkaZkClient, requests: Sequence[PartitionReassignment]
) -> dict[TopicPartition, tuple[int, ...]]:
    """Start a reassignment: refuse while one runs, check `requests` against the topics and
    registered brokers, then create `/admin/reassign_partitions`. Returns the current
    assignment of the listed partitions (a rollback). Nothing is written on an error."""
    reassignments = ReassignmentZk(zk)
    try:
        running = reassignments.get_reassignments() is not None
    except ZnodeFormatError:
        running = True
    if running:
        raise _in_progress()
    names = sorted({r.topic_partition.topic for r in requests})
    reads = zk.get_topic_assignments(names)
    if reads.malformed:
        raise next(iter(reads.malformed.values()))
    problems = reassignment_problems(requests, reads.found, set(zk.get_all_brokers().brokers))
    if problems:
        raise ReassignCommandError(
            "the reassignment was not started:\n" + "\n".join(f"  {p}" for p in problems)
        )
    rollback = {
        r.topic_partition: current_replicas(
            reads.found[r.topic_partition.topic].partitions[r.topic_partition.partition]
        )
        for r in requests
    }
    try:
        reassignments.create_reassignments(requests)
    except ReassignmentInProgressError:
        raise _in_progress() from None
    return rollback


def _in_progress() -> ReassignCommandError:
    return ReassignCommandError(
        f"a partition reassignment is already running ({ReassignPartitionsZNode.path()} "
        "exists); wait until `testbed reassign verify` reports it finished"
    )


def render_started(rollback: Assignment) -> str:
    """The output of `execute`: the assignment before it, for a rollback, then the
    partitions whose reassignment was started."""
    return "\n".join(
        [
            "Current partition replica assignment",
            "",
            render_reassignment(rollback),
            "",
            "To roll back, keep this JSON and pass it to `testbed reassign execute "
            "--reassignment-json-file`.",
            "Started the reassignment of partitions "
            + ",".join(str(tp) for tp in sorted(rollback))
            + ".",
        ]
    )


def _ids(ids: Iterable[int]) -> str:
    return "[" + ",".join(str(i) for i in ids) + "]"
