"""`Record` and its on-disk encoding, the one place that knows the record format.

Every record is stored alone and length-prefixed, big-endian:

    length     u32   bytes that follow this field
    crc        u32   CRC-32 (zlib) of everything after this field
    offset     i64
    epoch      i32   the leader epoch the record was written in
    timestamp  i64   milliseconds
    key_len    i32   -1 for a null key
    key        key_len bytes
    value_len  i32
    value      value_len bytes

Pure functions; any thread may call them.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from broker_node.storage.errors import InvalidRecordError

__all__ = [
    "LENGTH_PREFIX_BYTES",
    "PEEK_OFFSET_BYTES",
    "RECORD_OVERHEAD",
    "Record",
    "decode_record",
    "encode_fields",
    "encode_record",
    "encoded_size",
    "peek_offset",
    "record_length",
    "scan_encoded",
    "split_records",
]

_LENGTH = struct.Struct(">I")
_CRC = struct.Struct(">I")
_FIXED = struct.Struct(">qiqi")  # offset, leader epoch, timestamp, key length
_VALUE_LENGTH = struct.Struct(">i")
_PREFIX = struct.Struct(">II")  # length, crc
_KEYLESS = struct.Struct(">qiqii")  # _FIXED with key length -1, then the value length
_HEADER = struct.Struct(">IIqiqi")  # length, crc, then _FIXED

LENGTH_PREFIX_BYTES = _LENGTH.size
"""Bytes of the length field that starts every record."""

_MIN_LENGTH = _CRC.size + _FIXED.size + _VALUE_LENGTH.size
RECORD_OVERHEAD = LENGTH_PREFIX_BYTES + _MIN_LENGTH
"""Bytes a record with an empty key and value occupies (36)."""


@dataclass(frozen=True, slots=True)
class Record:
    """One record of a partition log, with the offset and leader epoch it was stored at."""

    offset: int
    leader_epoch: int
    timestamp_ms: int
    key: bytes | None
    value: bytes


def encoded_size(key: bytes | None, value: bytes) -> int:
    """Bytes the record with this key and value occupies in a segment."""
    return RECORD_OVERHEAD + (0 if key is None else len(key)) + len(value)


def encode_record(record: Record) -> bytes:
    """The record's bytes as stored in a segment; `ValueError` if a field does not fit."""
    return encode_fields(
        record.offset, record.leader_epoch, record.timestamp_ms, record.key, record.value
    )


def encode_fields(
    offset: int, leader_epoch: int, timestamp_ms: int, key: bytes | None, value: bytes
) -> bytes:
    """`encode_record` of a record given by its fields (a leader encodes what it appends
    without building `Record`s first); `ValueError` if a field does not fit."""
    try:
        if key is None:
            body = _KEYLESS.pack(offset, leader_epoch, timestamp_ms, -1, len(value)) + value
        else:
            body = b"".join(
                (
                    _FIXED.pack(offset, leader_epoch, timestamp_ms, len(key)),
                    key,
                    _VALUE_LENGTH.pack(len(value)),
                    value,
                )
            )
        return _PREFIX.pack(_CRC.size + len(body), zlib.crc32(body)) + body
    except struct.error as exc:
        raise ValueError(f"record does not fit the on-disk format: {exc}") from exc


def record_length(prefix: bytes, position: int) -> int:
    """Total bytes of the record whose first `LENGTH_PREFIX_BYTES` bytes are `prefix`.

    Raises `InvalidRecordError` when the length field cannot belong to a record.
    """
    length: int = _LENGTH.unpack(prefix)[0]
    if length < _MIN_LENGTH:
        raise InvalidRecordError(position, f"length field {length} is below the minimum")
    return LENGTH_PREFIX_BYTES + length


_OFFSET = struct.Struct(">q")
PEEK_OFFSET_BYTES = LENGTH_PREFIX_BYTES + _CRC.size + _OFFSET.size
"""Bytes at the start of a record that `peek_offset` needs."""


def peek_offset(head: bytes) -> int:
    """The offset field of the record whose first `PEEK_OFFSET_BYTES` bytes are `head`
    (unchecked: the CRC is not verified)."""
    offset: int = _OFFSET.unpack_from(head, LENGTH_PREFIX_BYTES + _CRC.size)[0]
    return offset


def decode_record(data: bytes, position: int) -> Record:
    """Decode one whole record (`data` is exactly its bytes, length field included).

    `position` only names the record in errors. Raises `InvalidRecordError` when the CRC
    does not match or the key and value lengths disagree with the length field.
    """
    body_start = LENGTH_PREFIX_BYTES + _CRC.size
    if len(data) < RECORD_OVERHEAD or record_length(data[:LENGTH_PREFIX_BYTES], position) != len(
        data
    ):
        raise InvalidRecordError(position, "truncated record")
    (crc,) = _CRC.unpack_from(data, LENGTH_PREFIX_BYTES)
    if zlib.crc32(memoryview(data)[body_start:]) != crc:
        raise InvalidRecordError(position, "CRC mismatch")
    offset, epoch, timestamp, key_length = _FIXED.unpack_from(data, body_start)
    cursor = body_start + _FIXED.size
    if key_length < -1 or cursor + max(key_length, 0) + _VALUE_LENGTH.size > len(data):
        raise InvalidRecordError(position, f"bad key length {key_length}")
    key = None if key_length == -1 else data[cursor : cursor + key_length]
    cursor += max(key_length, 0)
    (value_length,) = _VALUE_LENGTH.unpack_from(data, cursor)
    cursor += _VALUE_LENGTH.size
    if value_length < 0 or cursor + value_length != len(data):
        raise InvalidRecordError(position, f"bad value length {value_length}")
    return Record(offset, epoch, timestamp, key, data[cursor:])


def split_records(data: bytes) -> tuple[list[Record], list[bytes]]:
    """The records of consecutive encoded records (as a leader sends a follower the bytes
    of its log), each decoded and checked as `decode_record` does, with each one's bytes.
    Raises `InvalidRecordError` (positions counted from the start of `data`)."""
    records: list[Record] = []
    encoded: list[bytes] = []
    position = 0
    size = len(data)
    while position < size:
        if size - position < LENGTH_PREFIX_BYTES:
            raise InvalidRecordError(position, "torn length field")
        length = record_length(data[position : position + LENGTH_PREFIX_BYTES], position)
        if position + length > size:
            raise InvalidRecordError(position, "torn record")
        one = data[position : position + length]
        records.append(decode_record(one, position))
        encoded.append(one)
        position += length
    return records, encoded


def scan_encoded(data: bytes) -> tuple[list[int], list[int], list[int]]:
    """(lengths, offsets, leader epochs) of the consecutive encoded records in `data`, each
    checked as `decode_record` checks one (CRC, length, key and value lengths) but none
    decoded: what a follower needs to copy the leader's bytes. Raises `InvalidRecordError`
    (positions counted from the start of `data`)."""
    lengths: list[int] = []
    offsets: list[int] = []
    epochs: list[int] = []
    view = memoryview(data)
    header = _HEADER.unpack_from
    value_length_at = _VALUE_LENGTH.unpack_from
    crc32 = zlib.crc32
    body_start = LENGTH_PREFIX_BYTES + _CRC.size
    position = 0
    size = len(data)
    while position < size:
        if size - position < RECORD_OVERHEAD:
            raise InvalidRecordError(position, "torn record")
        length, crc, offset, epoch, _, key_length = header(data, position)
        end = position + LENGTH_PREFIX_BYTES + length
        if length < _MIN_LENGTH:
            raise InvalidRecordError(position, f"length field {length} is below the minimum")
        if end > size:
            raise InvalidRecordError(position, "torn record")
        if crc32(view[position + body_start : end]) != crc:
            raise InvalidRecordError(position, "CRC mismatch")
        cursor = position + body_start + _FIXED.size + max(key_length, 0)
        if key_length < -1 or cursor + _VALUE_LENGTH.size > end:
            raise InvalidRecordError(position, f"bad key length {key_length}")
        (value_length,) = value_length_at(data, cursor)
        if value_length < 0 or cursor + _VALUE_LENGTH.size + value_length != end:
            raise InvalidRecordError(position, f"bad value length {value_length}")
        lengths.append(end - position)
        offsets.append(offset)
        epochs.append(epoch)
        position = end
    return lengths, offsets, epochs
