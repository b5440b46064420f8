"""What a power loss takes back: `UnsyncedJournal` records, per file, what every change
since that file's last fsync replaced, so that `lose` can roll all of them back (lazyfs's
model of a lost page cache). The disk layer (`harness.disk_layer`) keeps one while a rule
asks for it.

A file is named by its inode (`FileKey`: device and inode number), so that renames
(checkpoints are replaced via a temporary file) and open handles agree on it. Each change
is one `Undo`: the size the file had before and the bytes the change overwrote inside that
size (none for an append; the cut-off tail for a shrinking truncate). A file created since
its directory's last look (`created`) reverts to empty. Rolling back a file replays its
undos newest first: grow or cut to the old size, then put the old bytes back.

Metadata is durable in this model (a journalling file system's ordered metadata):
creations, renames and unlinks survive, the data written since the last fsync does not.
So a power loss leaves what a lost page cache leaves: short or empty segment files, and
checkpoint files renamed into place but empty.

`UnsyncedJournal` is pure bookkeeping over an abstract `Storage` (reads, writes and
truncates of a file by key), so that it is tested without FUSE. Not thread-safe: the
layer guards it with its state's lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

#: A file: (st_dev, st_ino).
FileKey = tuple[int, int]


class Storage(Protocol):
    """The file operations a rollback needs, by key (the layer's are relative to its
    directory's descriptor)."""

    def pwrite(self, key: FileKey, data: bytes, offset: int) -> None:
        """Write `data` at `offset`."""

    def truncate(self, key: FileKey, size: int) -> None:
        """Grow or cut the file to `size` bytes."""


@dataclass(frozen=True, slots=True)
class Undo:
    """One change taken back: the file's size before it and the bytes at `offset` it
    overwrote."""

    size: int
    offset: int = 0
    old: bytes = b""


@dataclass(slots=True)
class FileJournal:
    """The undos of one file since its last fsync, oldest first, and how many bytes the
    changes wrote or cut."""

    undos: list[Undo] = field(default_factory=list)
    changed_bytes: int = 0


@dataclass(frozen=True, slots=True)
class Loss:
    """What a `lose` took back: files rolled back and bytes of their changes."""

    files: int
    bytes: int

    def to_json(self) -> dict[str, int]:
        """The counts as the control socket reports them."""
        return {"files": self.files, "bytes": self.bytes}


class UnsyncedJournal:
    """The changes of every file since its last fsync (not thread-safe)."""

    def __init__(self) -> None:
        self._files: dict[FileKey, FileJournal] = {}

    def __len__(self) -> int:
        return len(self._files)

    def created(self, key: FileKey) -> None:
        """A new file: it reverts to empty."""
        self._files[key] = FileJournal([Undo(0)])

    def wrote(
        self, key: FileKey, offset: int, length: int, size: int, read: Callable[[int, int], bytes]
    ) -> None:
        """`length` bytes are about to be written at `offset` of a file of `size` bytes;
        `read(offset, n)` reads its current bytes (only those the write overwrites)."""
        overwritten = max(0, min(offset + length, size) - offset)
        old = read(offset, overwritten) if overwritten else b""
        journal = self._files.setdefault(key, FileJournal())
        journal.undos.append(Undo(size, offset, old))
        journal.changed_bytes += length

    def truncated(
        self, key: FileKey, length: int, size: int, read: Callable[[int, int], bytes]
    ) -> None:
        """The file of `size` bytes is about to be cut or grown to `length`."""
        old = read(length, size - length) if length < size else b""
        journal = self._files.setdefault(key, FileJournal())
        journal.undos.append(Undo(size, length, old))
        journal.changed_bytes += abs(size - length)

    def synced(self, key: FileKey) -> None:
        """The file was fsynced: its changes are durable."""
        self._files.pop(key, None)

    def forget(self, key: FileKey) -> None:
        """The file's last name is gone (unlinked, or replaced by a rename)."""
        self._files.pop(key, None)

    def lose(self, storage: Storage, present: Iterable[FileKey]) -> Loss:
        """Roll back every change of the files in `present` (those still reachable),
        newest first, and clear the journal."""
        files = changed = 0
        reachable = set(present)
        for key, journal in self._files.items():
            if key not in reachable:
                continue
            for undo in reversed(journal.undos):
                storage.truncate(key, undo.size)
                if undo.old:
                    storage.pwrite(key, undo.old, undo.offset)
            files += 1
            changed += journal.changed_bytes
        self._files.clear()
        return Loss(files, changed)
