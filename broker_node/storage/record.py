"""`Record` and the on-disk record batch, the one place that knows the log format.

A log is a sequence of record batches. Everything one append writes is one batch (a
leader's append of one Produce's records, or one batch a follower copies from its
leader), with one leader epoch and one CRC; a batch is written, read, copied, validated
and truncated whole. Big-endian:

    base_offset        i64   offset of the batch's first record
    length             u32   bytes that follow this field
    leader_epoch       i32   the leader epoch the batch was written in
    magic              i8    2, the format's version (`MAGIC`)
    crc                u32   CRC-32 (zlib) of every byte after this field
    last_offset_delta  i32   record count - 1
    first_timestamp    i64   ms, the first record's timestamp
    max_timestamp      i64   ms, the greatest record timestamp
    record_count       i32   at least 1
    records            record_count of:
        offset_delta   i32   the record's offset minus base_offset: 0, 1, 2, ...
        timestamp      i64   ms
        key_len        i32   -1 for a null key
        key            key_len bytes
        value_len      i32
        value          value_len bytes

An earlier format stored every record alone (length u32, crc u32, offset i64, ...), so a
segment written in it starts with a length where a batch starts with its base offset;
`legacy_head` tells the two apart from a segment's first bytes.

Pure functions; any thread may call them.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from broker_node.storage.errors import InvalidRecordError

__all__ = [
    "BATCH_HEADER_BYTES",
    "MAGIC",
    "RECORD_OVERHEAD",
    "BatchHeader",
    "Record",
    "batch_header",
    "cut_batches",
    "decode_batch",
    "encode_batch",
    "encode_records",
    "encoded_size",
    "legacy_head",
    "scan_batches",
    "split_batches",
]

MAGIC = 2
"""The batch format's version byte."""

_HEAD = struct.Struct(">qIib")  # base offset, length, leader epoch, magic
_CRC = struct.Struct(">I")
_TAIL = struct.Struct(">iqqi")  # last offset delta, first and max timestamp, record count
_HEADER = struct.Struct(">qIibIiqqi")  # _HEAD, crc, _TAIL
_RECORD = struct.Struct(">iqi")  # offset delta, timestamp, key length
_VALUE_LENGTH = struct.Struct(">i")
_KEYLESS = struct.Struct(">iqii")  # _RECORD with key length -1, then the value length
_OFFSET = struct.Struct(">q")

BATCH_HEADER_BYTES = _HEADER.size
"""Bytes of a batch before its first record (45)."""

_LENGTH_END = _OFFSET.size + 4  # where the length field ends: what it does not count
_CRC_END = _HEAD.size + _CRC.size  # where the bytes the CRC covers start

RECORD_OVERHEAD = _RECORD.size + _VALUE_LENGTH.size
"""Bytes a record with an empty key and value takes inside a batch (20)."""


@dataclass(frozen=True, slots=True)
class Record:
    """One record of a partition log, with the offset and leader epoch it was stored at."""

    offset: int
    leader_epoch: int
    timestamp_ms: int
    key: bytes | None
    value: bytes


class BatchHeader(NamedTuple):
    """What a batch's header says (`batch_header`): enough to place a batch in a log."""

    base_offset: int
    #: bytes of the whole batch, header included
    size: int
    leader_epoch: int
    record_count: int

    @property
    def next_offset(self) -> int:
        """The offset after the batch's last record."""
        return self.base_offset + self.record_count


def encoded_size(key: bytes | None, value: bytes) -> int:
    """Bytes the record with this key and value takes inside a batch."""
    return RECORD_OVERHEAD + (0 if key is None else len(key)) + len(value)


def encode_batch(
    base_offset: int, leader_epoch: int, records: Sequence[tuple[bytes | None, bytes, int]]
) -> bytes:
    """One batch of (key, value, timestamp_ms) records at `base_offset`... in
    `leader_epoch`; `ValueError` if there are none or a field does not fit."""
    if not records:
        raise ValueError("a batch holds at least one record")
    parts: list[bytes] = []
    keyless = _KEYLESS.pack
    record_head = _RECORD.pack
    value_length = _VALUE_LENGTH.pack
    try:
        for delta, (key, value, timestamp) in enumerate(records):
            if key is None:
                parts.append(keyless(delta, timestamp, -1, len(value)))
            else:
                parts += (record_head(delta, timestamp, len(key)), key, value_length(len(value)))
            parts.append(value)
        timestamps = [timestamp for _, _, timestamp in records]
        tail = _TAIL.pack(len(records) - 1, timestamps[0], max(timestamps), len(records))
        body = tail + b"".join(parts)
        crc = zlib.crc32(body)
        length = len(body) + _CRC_END - _LENGTH_END
        return _HEAD.pack(base_offset, length, leader_epoch, MAGIC) + _CRC.pack(crc) + body
    except struct.error as exc:
        raise ValueError(f"record does not fit the on-disk format: {exc}") from exc


def encode_records(records: Sequence[Record]) -> list[bytes]:
    """Records with contiguous offsets as batches: one for each run of one leader epoch
    (how a log stores records copied one by one). `ValueError` if the offsets have a gap."""
    batches: list[bytes] = []
    start = 0
    for i, record in enumerate(records):
        if record.offset != records[0].offset + i:
            raise ValueError(f"gap: record {record.offset} after {records[i - 1].offset}")
        if i + 1 == len(records) or records[i + 1].leader_epoch != record.leader_epoch:
            run = records[start : i + 1]
            batches.append(
                encode_batch(
                    run[0].offset,
                    record.leader_epoch,
                    [(r.key, r.value, r.timestamp_ms) for r in run],
                )
            )
            start = i + 1
    return batches


def batch_header(head: bytes, position: int) -> BatchHeader:
    """The header of the batch whose first `BATCH_HEADER_BYTES` bytes are `head`, with the
    sizes checked but not the CRC. `InvalidRecordError` if it cannot start a batch."""
    if len(head) < BATCH_HEADER_BYTES:
        raise InvalidRecordError(position, "torn batch header")
    base, length, epoch, magic, _, last_delta, _, _, count = _HEADER.unpack_from(head)
    if magic != MAGIC:
        raise InvalidRecordError(position, f"magic byte {magic}, not {MAGIC}")
    if length < BATCH_HEADER_BYTES - _LENGTH_END + count * RECORD_OVERHEAD:
        raise InvalidRecordError(position, f"length field {length} is below the minimum")
    if count < 1 or last_delta != count - 1:
        raise InvalidRecordError(position, f"{count} records, last offset delta {last_delta}")
    return BatchHeader(base, _LENGTH_END + length, epoch, count)


def _checked_header(data: bytes, position: int, at: int = 0) -> BatchHeader:
    """The header of the whole batch at `at` in `data` after checking its CRC and that
    `data` holds all of it (`position` names the batch in errors)."""
    if len(data) - at < BATCH_HEADER_BYTES:
        raise InvalidRecordError(position, "torn batch header")
    header = batch_header(data[at : at + BATCH_HEADER_BYTES], position)
    end = at + header.size
    if end > len(data):
        raise InvalidRecordError(position, "torn batch")
    (crc,) = _CRC.unpack_from(data, at + _HEAD.size)
    if zlib.crc32(memoryview(data)[at + _CRC_END : end]) != crc:
        raise InvalidRecordError(position, "CRC mismatch")
    return header


def decode_batch(data: bytes, position: int) -> list[Record]:
    """The records of one whole batch (`data` is exactly its bytes).

    `position` only names the batch in errors. Raises `InvalidRecordError` when the CRC
    does not match or the records do not fill the batch exactly."""
    header = _checked_header(data, position)
    if header.size != len(data):
        raise InvalidRecordError(position, "bytes after the batch")
    return list(_decode_records(data, header, position))


def _decode_records(data: bytes, header: BatchHeader, position: int) -> Iterator[Record]:
    base, size, epoch, count = header
    cursor = BATCH_HEADER_BYTES
    for expected in range(count):
        if cursor + RECORD_OVERHEAD > size:
            raise InvalidRecordError(position, f"record {expected} overruns the batch")
        delta, timestamp, key_length = _RECORD.unpack_from(data, cursor)
        if delta != expected:
            raise InvalidRecordError(position, f"offset delta {delta} where {expected} was due")
        cursor += _RECORD.size
        if key_length < -1 or cursor + max(key_length, 0) + _VALUE_LENGTH.size > size:
            raise InvalidRecordError(position, f"bad key length {key_length}")
        key = None if key_length == -1 else data[cursor : cursor + key_length]
        cursor += max(key_length, 0)
        (value_length,) = _VALUE_LENGTH.unpack_from(data, cursor)
        cursor += _VALUE_LENGTH.size
        if value_length < 0 or cursor + value_length > size:
            raise InvalidRecordError(position, f"bad value length {value_length}")
        yield Record(base + delta, epoch, timestamp, key, data[cursor : cursor + value_length])
        cursor += value_length
    if cursor != size:
        raise InvalidRecordError(position, f"{size - cursor} bytes after the last record")


def scan_batches(data: bytes) -> list[BatchHeader]:
    """The headers of the consecutive whole batches in `data`, each batch's CRC checked
    but none decoded: what a follower needs to copy its leader's bytes. Raises
    `InvalidRecordError` (positions counted from the start of `data`)."""
    headers: list[BatchHeader] = []
    position = 0
    while position < len(data):
        header = _checked_header(data, position, position)
        headers.append(header)
        position += header.size
    return headers


def split_batches(data: bytes) -> tuple[list[Record], list[bytes]]:
    """The records of consecutive whole batches, each checked and decoded as
    `decode_batch` does, and each batch's bytes. Raises `InvalidRecordError` (positions
    counted from the start of `data`)."""
    records: list[Record] = []
    batches: list[bytes] = []
    position = 0
    for header in scan_batches(data):
        one = data[position : position + header.size]
        records += _decode_records(one, header, position)
        batches.append(one)
        position += header.size
    return records, batches


def cut_batches(data: bytes, offset: int) -> bytes:
    """Consecutive batches `data` from `offset` when it falls inside the first batch:
    that batch's records from `offset` as a batch of their own (the batch is checked as
    `decode_batch` checks it), the others as they are. Else `data` itself, unchecked."""
    if len(data) < BATCH_HEADER_BYTES:
        return data
    first = batch_header(data[:BATCH_HEADER_BYTES], 0)
    if not first.base_offset < offset < first.next_offset or first.size > len(data):
        return data
    records = [r for r in decode_batch(data[: first.size], 0) if r.offset >= offset]
    return encode_records(records)[0] + data[first.size :]


def legacy_head(head: bytes, base_offset: int) -> bool:
    """Whether `head`, the first bytes of the segment whose base offset is `base_offset`,
    is a record of the earlier per-record format (offset at byte 8) rather than a batch
    (base offset at byte 0, then `MAGIC` at byte 16)."""
    magic_at = _HEAD.size - 1
    batch = len(head) > magic_at and head[magic_at] == MAGIC
    if batch and _OFFSET.unpack_from(head)[0] == base_offset:
        return False
    return len(head) >= 16 and bool(_OFFSET.unpack_from(head, 8)[0] == base_offset)
