"""`OffsetIndex`: the sparse offset -> file position map of one segment (`<base>.index`).

Each entry is 8 bytes, big-endian: the offset relative to the segment's base offset (u32)
and the byte position of that record in the segment's log file (u32). An entry is added
before a record whose position lies more than `index_interval_bytes` past the last indexed
position (`index_entry_due`), so lookups land at most about one interval before the target.

The index is only a shortcut: it is rebuilt from the log when missing or inconsistent.

Threads: not thread-safe; only `PartitionLog`, holding its lock, calls it.
"""

from __future__ import annotations

import bisect
import itertools
import os
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from broker_node.storage.checkpoints import atomic_write

__all__ = ["INDEX_ENTRY_BYTES", "OffsetIndex", "index_entry_due", "parse_index"]

_ENTRY = struct.Struct(">II")
INDEX_ENTRY_BYTES = _ENTRY.size
_U32_MAX = (1 << 32) - 1


def index_entry_due(position: int, last_indexed_position: int, interval_bytes: int) -> bool:
    """Whether the record about to be written at `position` gets an index entry."""
    return position - last_indexed_position > interval_bytes


def parse_index(data: bytes, base_offset: int) -> list[tuple[int, int]] | None:
    """Entries (absolute offset, position) of an index file's bytes; None if malformed
    (a partial entry, or offsets or positions that do not strictly increase)."""
    if len(data) % INDEX_ENTRY_BYTES:
        return None
    entries = [(base_offset + rel, pos) for rel, pos in _ENTRY.iter_unpack(data)]
    for (prev_offset, prev_pos), (offset, pos) in itertools.pairwise(entries):
        if offset <= prev_offset or pos <= prev_pos:
            return None
    return entries


class OffsetIndex:
    """The index of one segment, kept in memory and mirrored to its file."""

    def __init__(
        self, path: Path, base_offset: int, entries: Sequence[tuple[int, int]] = ()
    ) -> None:
        self.path = path
        self.base_offset = base_offset
        self._offsets = [offset for offset, _ in entries]
        self._positions = [position for _, position in entries]
        self._file: BinaryIO | None = None

    @property
    def entries(self) -> list[tuple[int, int]]:
        """(offset, position) pairs, ascending."""
        return list(zip(self._offsets, self._positions, strict=True))

    @property
    def last_position(self) -> int:
        """Position of the last indexed record, 0 (the segment start) when empty."""
        return self._positions[-1] if self._positions else 0

    def lookup(self, offset: int) -> tuple[int, int]:
        """(offset, position) of the last entry at or before `offset`, else the segment start."""
        i = bisect.bisect_right(self._offsets, offset)
        if i == 0:
            return self.base_offset, 0
        return self._offsets[i - 1], self._positions[i - 1]

    def append(self, entries: Sequence[tuple[int, int]]) -> None:
        """Add entries past the last one, written to the file with one `write`."""
        if not entries:
            return
        data = bytearray()
        for offset, position in entries:
            relative = offset - self.base_offset
            if not 0 <= relative <= _U32_MAX or position > _U32_MAX:
                raise ValueError(f"index entry ({offset}, {position}) does not fit u32")
            data += _ENTRY.pack(relative, position)
        if self._file is None:
            self._file = open(self.path, "ab")  # noqa: SIM115 - closed by close()
        self._file.write(data)
        self._file.flush()
        self._offsets.extend(offset for offset, _ in entries)
        self._positions.extend(position for _, position in entries)

    def truncate_to(self, offset: int) -> None:
        """Drop every entry at or past `offset`."""
        keep = bisect.bisect_left(self._offsets, offset)
        if keep == len(self._offsets):
            return
        del self._offsets[keep:]
        del self._positions[keep:]
        self.close()
        with open(self.path, "r+b") as file:
            file.truncate(keep * INDEX_ENTRY_BYTES)

    def rewrite(self, fsync: bool) -> None:
        """Replace the file with the in-memory entries (after a rebuild)."""
        self.close()
        data = b"".join(
            _ENTRY.pack(offset - self.base_offset, position)
            for offset, position in zip(self._offsets, self._positions, strict=True)
        )
        atomic_write(self.path, data, fsync)

    def sync(self) -> None:
        """Write the file through to the disk (fsync)."""
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
        elif self.path.exists():
            with open(self.path, "rb") as file:
                os.fsync(file.fileno())

    def close(self) -> None:
        """Close the append handle; the index stays usable (it reopens on append)."""
        if self._file is not None:
            self._file.close()
            self._file = None
