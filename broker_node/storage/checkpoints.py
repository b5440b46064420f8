"""The checkpoint files of a partition log directory: names, formats, atomic writes.

    leader-epoch-checkpoint   Kafka's text format: a version line `0`, a count line, then
                              one `epoch startOffset` line per entry
    hw-checkpoint             the high watermark as one decimal integer

Both are written whole to `<name>.tmp` and renamed over the old file (`os.replace`), so a
killed process leaves either the old or the new checkpoint, never a mix. Leftover `.tmp`
files are garbage: `PartitionLog` deletes them when it opens the directory.

Pure functions apart from `atomic_write`; any thread may call them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from broker_node.storage.epoch_cache import EpochEntry
from broker_node.storage.errors import CorruptLogError

__all__ = [
    "HW_CHECKPOINT",
    "LEADER_EPOCH_CHECKPOINT",
    "TMP_SUFFIX",
    "atomic_write",
    "decode_epoch_checkpoint",
    "decode_hw_checkpoint",
    "encode_epoch_checkpoint",
    "encode_hw_checkpoint",
    "fsync_directory",
]

LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
HW_CHECKPOINT = "hw-checkpoint"
TMP_SUFFIX = ".tmp"
_EPOCH_CHECKPOINT_VERSION = 0


def fsync_directory(directory: Path) -> None:
    """Make renames and new files in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, fsync: bool) -> None:
    """Replace `path` with `data` via a temporary file and `os.replace`; fsync if asked."""
    tmp = path.with_name(path.name + TMP_SUFFIX)
    with open(tmp, "wb") as file:
        file.write(data)
        file.flush()
        if fsync:
            os.fsync(file.fileno())
    os.replace(tmp, path)
    if fsync:
        fsync_directory(path.parent)


def encode_epoch_checkpoint(entries: Sequence[EpochEntry]) -> bytes:
    """The leader-epoch-checkpoint file's bytes for `entries`."""
    lines = [str(_EPOCH_CHECKPOINT_VERSION), str(len(entries))]
    lines += [f"{entry.epoch} {entry.start_offset}" for entry in entries]
    return ("\n".join(lines) + "\n").encode("ascii")


def decode_epoch_checkpoint(data: bytes, path: Path) -> list[EpochEntry]:
    """Entries of a leader-epoch-checkpoint file; `CorruptLogError` if malformed.

    Malformed includes a wrong version or count, a line that is not two non-negative
    integers, and epochs or start offsets that do not strictly increase.
    """

    def corrupt(reason: str) -> CorruptLogError:
        return CorruptLogError(f"{path}: {reason}")

    try:
        lines = data.decode("ascii").splitlines()
    except UnicodeDecodeError as exc:
        raise corrupt("not ASCII text") from exc
    if len(lines) < 2 or lines[0].strip() != str(_EPOCH_CHECKPOINT_VERSION):
        raise corrupt(f"expected version {_EPOCH_CHECKPOINT_VERSION}")
    count = _non_negative(lines[1].strip())
    if count is None or count != len(lines) - 2:
        raise corrupt(f"count line {lines[1]!r} does not match {len(lines) - 2} entries")
    entries: list[EpochEntry] = []
    for line in lines[2:]:
        fields = line.split()
        numbers = [_non_negative(field) for field in fields]
        if len(numbers) != 2 or numbers[0] is None or numbers[1] is None:
            raise corrupt(f"malformed line {line!r}")
        entry = EpochEntry(numbers[0], numbers[1])
        if entries and (
            entry.epoch <= entries[-1].epoch or entry.start_offset <= entries[-1].start_offset
        ):
            raise corrupt(f"entry {line!r} does not follow {entries[-1]}")
        entries.append(entry)
    return entries


def encode_hw_checkpoint(high_watermark: int) -> bytes:
    """The hw-checkpoint file's bytes."""
    return f"{high_watermark}\n".encode("ascii")


def decode_hw_checkpoint(data: bytes, path: Path) -> int:
    """The high watermark in an hw-checkpoint file; `CorruptLogError` if malformed."""
    try:
        value = _non_negative(data.decode("ascii").strip())
    except UnicodeDecodeError:
        value = None
    if value is None:
        raise CorruptLogError(f"{path}: not a high watermark: {data[:40]!r}")
    return value


def _non_negative(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() else None
