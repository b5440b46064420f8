"""Walking a segment's log file record by record with `pread` in 64 KiB chunks: the
record headers alone (position, offset, length) for reads that only need to find where to
start and stop, or whole decoded records for recovery and full scans. Each raises
`InvalidRecordError` at the first torn or corrupt record. Called by `LogSegment` under its
log's lock, on whatever thread holds it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from broker_node.storage.errors import InvalidRecordError
from broker_node.storage.record import (
    LENGTH_PREFIX_BYTES,
    PEEK_OFFSET_BYTES,
    Record,
    decode_record,
    peek_offset,
    record_length,
)

_READ_CHUNK_BYTES = 64 * 1024


def scan_headers(fd: int, position: int, size: int) -> Iterator[tuple[int, int, int]]:
    """(position, offset, length) of each record of the file `fd` from `position` to
    `size`, from the length and offset fields alone (`scan_records` without decoding)."""
    buffer = b""
    buffer_start = position
    while position < size:
        at = position - buffer_start
        if at + PEEK_OFFSET_BYTES > len(buffer):
            if size - position < PEEK_OFFSET_BYTES:
                raise InvalidRecordError(position, "torn record header")
            buffer = os.pread(fd, min(_READ_CHUNK_BYTES, size - position), position)
            buffer_start = position
            at = 0
            if len(buffer) < PEEK_OFFSET_BYTES:
                raise InvalidRecordError(position, "file shorter than its size")
        length = record_length(buffer[at : at + LENGTH_PREFIX_BYTES], position)
        if position + length > size:
            raise InvalidRecordError(position, "torn record")
        yield position, peek_offset(buffer[at : at + PEEK_OFFSET_BYTES]), length
        position += length


def scan_records(fd: int, position: int, size: int) -> Iterator[tuple[int, Record, int]]:
    """(position, record, length) of each record of the file `fd` from `position` to
    `size`."""
    buffer = b""
    buffer_start = position
    while position < size:
        if size - position < LENGTH_PREFIX_BYTES:
            raise InvalidRecordError(position, "torn length field")
        if position + LENGTH_PREFIX_BYTES > buffer_start + len(buffer):
            buffer = os.pread(fd, min(_READ_CHUNK_BYTES, size - position), position)
            buffer_start = position
        at = position - buffer_start
        length = record_length(buffer[at : at + LENGTH_PREFIX_BYTES], position)
        if position + length > size:
            raise InvalidRecordError(position, "torn record")
        if at + length > len(buffer):
            buffer = os.pread(fd, min(max(_READ_CHUNK_BYTES, length), size - position), position)
            buffer_start = position
            at = 0
            if len(buffer) < length:
                raise InvalidRecordError(position, "file shorter than its size")
        yield position, decode_record(buffer[at : at + length], position), length
        position += length
