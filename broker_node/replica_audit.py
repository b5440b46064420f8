"""What one replica's log holds, per leader epoch, for the ReplicaAudit request: each
epoch's offset range (from the leader-epoch cache, clipped to the log) and a digest of its
records, so that two replicas can be compared without shipping their records.

The digest of a range is the sha256 (hex) over its records in offset order, each as its
offset (8 bytes, big-endian), its leader epoch (4 bytes), its key (4-byte length, -1 for
none, then the bytes) and its value (4-byte length, then the bytes): two replicas whose
ranges of an epoch have the same offsets and digest hold the same records there.

Pure over the log it is given; the caller holds whatever lock keeps the log still
(`Partition.audited` holds the partition's). Runs on the gRPC worker answering
ReplicaAudit.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable

from broker_node.storage import PartitionLog, Record
from rpc import messages as m

#: Records read from the log per step of a digest.
READ_BATCH = 1000
#: The epoch of the records below the first entry of the leader-epoch cache (none known).
UNKNOWN_EPOCH = -1

_HEAD = struct.Struct(">qi")
_LENGTH = struct.Struct(">i")


def digest_records(records: Iterable[Record]) -> str:
    """The sha256 (hex) of `records` in the order given (the module docstring has the
    layout)."""
    h = hashlib.sha256()
    for r in records:
        h.update(_HEAD.pack(r.offset, r.leader_epoch))
        if r.key is None:
            h.update(_LENGTH.pack(-1))
        else:
            h.update(_LENGTH.pack(len(r.key)))
            h.update(r.key)
        h.update(_LENGTH.pack(len(r.value)))
        h.update(r.value)
    return h.hexdigest()


def epoch_ranges(
    entries: Iterable[tuple[int, int]], log_start: int, log_end: int
) -> list[tuple[int, int, int]]:
    """(epoch, start, end) of each leader epoch's records, from the epoch cache's
    (epoch, start offset) entries in ascending order, clipped to `log_start`..`log_end`;
    empty ranges left out. Records below the first entry are `UNKNOWN_EPOCH`'s. Pure."""
    starts = sorted(entries, key=lambda e: e[1])
    bounds: list[tuple[int, int]] = []
    if not starts or starts[0][1] > log_start:
        bounds.append((UNKNOWN_EPOCH, log_start))
    bounds += starts
    out = []
    for i, (epoch, start) in enumerate(bounds):
        end = bounds[i + 1][1] if i + 1 < len(bounds) else log_end
        lo, hi = max(start, log_start), min(end, log_end)
        if lo < hi:
            out.append((epoch, lo, hi))
    return out


def _records(log: PartitionLog, start: int, end: int) -> Iterable[Record]:
    offset = start
    while offset < end:
        batch = log.read(offset, end, max_records=READ_BATCH)
        if not batch:
            return
        yield from batch
        offset = batch[-1].offset + 1


def audit_log(log: PartitionLog) -> tuple[m.AuditedEpoch, ...]:
    """Each leader epoch of `log` with its offset range and digest, in offset order."""
    start, end, _ = log.offsets()
    entries = [(e.epoch, e.start_offset) for e in log.epoch_entries()]
    return tuple(
        m.AuditedEpoch(epoch, lo, hi, digest_records(_records(log, lo, hi)))
        for epoch, lo, hi in epoch_ranges(entries, start, end)
    )
