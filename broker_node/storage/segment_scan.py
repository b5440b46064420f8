"""Walking a segment's log file batch by batch with `pread` in 64 KiB chunks: the batch
headers alone (`scan_headers`, for reads that only need to find where to start and stop)
or whole batches (`scan_batch_bytes`, for recovery, decoding and full scans). Each raises
`InvalidRecordError` at the first torn batch or header that cannot start a batch.
`index_matches` checks an offset index against the batches it points at. Called
by `LogSegment` under its log's lock, on whatever thread holds it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

from broker_node.storage.errors import InvalidRecordError
from broker_node.storage.record import BATCH_HEADER_BYTES, BatchHeader, batch_header

_READ_CHUNK_BYTES = 64 * 1024


def scan_headers(fd: int, position: int, size: int) -> Iterator[tuple[int, BatchHeader]]:
    """(position, header) of each batch of the file `fd` from `position` to `size`, from
    the headers alone (neither decoded nor CRC-checked)."""
    buffer = b""
    buffer_start = position
    while position < size:
        at = position - buffer_start
        if at + BATCH_HEADER_BYTES > len(buffer):
            if size - position < BATCH_HEADER_BYTES:
                raise InvalidRecordError(position, "torn batch header")
            buffer = os.pread(fd, min(_READ_CHUNK_BYTES, size - position), position)
            buffer_start = position
            at = 0
            if len(buffer) < BATCH_HEADER_BYTES:
                raise InvalidRecordError(position, "file shorter than its size")
        header = batch_header(buffer[at : at + BATCH_HEADER_BYTES], position)
        if position + header.size > size:
            raise InvalidRecordError(position, "torn batch")
        yield position, header
        position += header.size


def scan_batch_bytes(fd: int, position: int, size: int) -> Iterator[tuple[int, bytes]]:
    """(position, bytes) of each whole batch of the file `fd` from `position` to `size`,
    unchecked past its header (`record.decode_batch` checks the rest)."""
    buffer = b""
    buffer_start = position
    while position < size:
        if size - position < BATCH_HEADER_BYTES:
            raise InvalidRecordError(position, "torn batch header")
        if position + BATCH_HEADER_BYTES > buffer_start + len(buffer):
            buffer = os.pread(fd, min(_READ_CHUNK_BYTES, size - position), position)
            buffer_start = position
            if len(buffer) < BATCH_HEADER_BYTES:
                raise InvalidRecordError(position, "file shorter than its size")
        at = position - buffer_start
        length = batch_header(buffer[at : at + BATCH_HEADER_BYTES], position).size
        if position + length > size:
            raise InvalidRecordError(position, "torn batch")
        if at + length > len(buffer):
            buffer = os.pread(fd, min(max(_READ_CHUNK_BYTES, length), size - position), position)
            buffer_start = position
            at = 0
            if len(buffer) < length:
                raise InvalidRecordError(position, "file shorter than its size")
        yield position, buffer[at : at + length]
        position += length


def index_matches(fd: int, entries: Sequence[tuple[int, int]], size: int) -> bool:
    """Whether every (offset, position) index entry points at a batch header of the file
    `fd` (of `size` bytes) whose base offset is the entry's offset."""
    for offset, position in entries:
        if position + BATCH_HEADER_BYTES > size:
            return False
        try:
            header = batch_header(os.pread(fd, BATCH_HEADER_BYTES, position), position)
        except InvalidRecordError:
            return False
        if header.base_offset != offset:
            return False
    return True
