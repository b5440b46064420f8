"""`audit.json`: the replica audit at the end of a run (docs/runs.md). Every replica of the
run's topic, as its broker described it (ClientApi `ReplicaAudit`), or as the log files of
a stopped broker hold it (`source`): leadership, log start, log end, high watermark and,
per leader epoch, the offset range it holds and a digest of those records.
`disagreements` compares the replicas of each partition epoch by epoch; the specification
invariants (log matching, agreement below the high watermark) read the same rows.

Pure values and file I/O on the calling thread.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rundir.errors import RunDirError

#: The version of `audit.json`'s fields (`version`).
AUDIT_VERSION = 1
#: A row's `source`: the broker answered ReplicaAudit.
FROM_RPC = "rpc"
#: A row's `source`: the broker's container was stopped; its log files were read.
FROM_FILES = "files"


@dataclass(frozen=True, slots=True)
class AuditedRange:
    """The records of one leader epoch in one replica: offsets `start_offset`..`end_offset`
    (exclusive) and their sha256 (hex)."""

    leader_epoch: int
    start_offset: int
    end_offset: int
    digest: str


@dataclass(frozen=True, slots=True)
class ReplicaReport:
    """One replica as broker `broker` described it; `error` names why its log could not be
    read ("" when it was). `source` says how: `FROM_RPC`, or `FROM_FILES` for a stopped
    broker, whose row has no leadership (`leader` and `leader_epoch` -1)."""

    broker: int
    topic: str
    partition: int
    leader: int
    leader_epoch: int
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    epochs: tuple[AuditedRange, ...] = ()
    error: str = ""
    source: str = FROM_RPC

    def to_json(self) -> dict[str, Any]:
        """The row as `audit.json` holds it."""
        return {
            "broker": self.broker,
            "topic": self.topic,
            "partition": self.partition,
            "leader": self.leader,
            "leader_epoch": self.leader_epoch,
            "log_start_offset": self.log_start_offset,
            "log_end_offset": self.log_end_offset,
            "high_watermark": self.high_watermark,
            "epochs": [
                [e.leader_epoch, e.start_offset, e.end_offset, e.digest] for e in self.epochs
            ],
            "error": self.error,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> ReplicaReport:
        """A row of `audit.json`; `RunDirError` when it is not one."""
        try:
            return cls(
                int(row["broker"]),
                str(row["topic"]),
                int(row["partition"]),
                int(row["leader"]),
                int(row["leader_epoch"]),
                int(row["log_start_offset"]),
                int(row["log_end_offset"]),
                int(row["high_watermark"]),
                tuple(AuditedRange(int(e), int(s), int(n), str(d)) for e, s, n, d in row["epochs"]),
                str(row.get("error", "")),
                str(row.get("source", FROM_RPC)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise RunDirError(f"audit.json: bad replica row {row!r}: {exc}") from exc


@dataclass(frozen=True, slots=True)
class Disagreement:
    """The replicas of one partition do not hold the same records of `leader_epoch`:
    `"digest"` (the same offsets, other records: log matching is broken) or `"range"`
    (other offsets, or the epoch missing on some: a lagging or divergent replica).
    `replicas`: broker -> `[start, end, digest]`, or None without the epoch."""

    topic: str
    partition: int
    leader_epoch: int
    kind: str
    replicas: dict[int, list[int | str] | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The row as `audit.json` holds it."""
        return {
            "topic": self.topic,
            "partition": self.partition,
            "leader_epoch": self.leader_epoch,
            "kind": self.kind,
            "replicas": {str(b): r for b, r in sorted(self.replicas.items())},
        }


def disagreements(reports: Iterable[ReplicaReport]) -> list[Disagreement]:
    """Each (partition, leader epoch) whose readable replicas do not all hold the same
    range with the same digest, by topic, partition and epoch. Pure."""
    by_tp: dict[tuple[str, int], list[ReplicaReport]] = {}
    for r in reports:
        if not r.error:
            by_tp.setdefault((r.topic, r.partition), []).append(r)
    out = []
    for (topic, partition), replicas in sorted(by_tp.items()):
        if len(replicas) < 2:
            continue
        held = {r.broker: {e.leader_epoch: e for e in r.epochs} for r in replicas}
        for epoch in sorted({e for ranges in held.values() for e in ranges}):
            found = {b: ranges.get(epoch) for b, ranges in held.items()}
            distinct = {
                (e.start_offset, e.end_offset, e.digest) if e else None for e in found.values()
            }
            if len(distinct) < 2:
                continue
            spans = {(s, n) for s, n, _ in (d for d in distinct if d is not None)}
            kind = "digest" if None not in distinct and len(spans) == 1 else "range"
            out.append(
                Disagreement(
                    topic,
                    partition,
                    epoch,
                    kind,
                    {
                        b: None if e is None else [e.start_offset, e.end_offset, e.digest]
                        for b, e in found.items()
                    },
                )
            )
    return out


def audit_document(
    topic: str, taken_ms: int, reports: Iterable[ReplicaReport], unreachable: Mapping[int, str]
) -> dict[str, Any]:
    """`audit.json`'s content: the rows, the brokers that did not answer and the
    disagreements found."""
    rows = sorted(reports, key=lambda r: (r.topic, r.partition, r.broker))
    return {
        "version": AUDIT_VERSION,
        "topic": topic,
        "taken_ms": taken_ms,
        "replicas": [r.to_json() for r in rows],
        "unreachable": {str(b): why for b, why in sorted(unreachable.items())},
        "disagreements": [d.to_json() for d in disagreements(rows)],
    }


def read_audit(path: Path) -> list[ReplicaReport]:
    """The replica rows of an `audit.json`; `RunDirError` for one this testbed cannot
    read (another version, not JSON, a bad row)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunDirError(f"{path}: unreadable audit: {exc}") from exc
    version = document.get("version") if isinstance(document, dict) else None
    if version != AUDIT_VERSION:
        raise RunDirError(f"{path}: audit version {version!r}, this testbed reads {AUDIT_VERSION}")
    return [ReplicaReport.from_json(row) for row in document.get("replicas", [])]
