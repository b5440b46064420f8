"""The disk layer's side of losing unsynced writes: `LossKeeper` feeds the layer's file
operations to an `UnsyncedJournal` (`harness.disk_journal`) while the rules ask for it
(`lose_unsynced`), and rolls the files under the layer's directory back on `lose`.

Files are keyed by inode from the descriptors the layer holds; old bytes are read through
a read-only reopen of the descriptor (`/proc/self/fd/N`: the broker may have opened the
file write-only). Only overwritten ranges are read, so appends cost one `fstat`.

Threads: libfuse's worker threads call the hooks, the control thread calls `lose` and
`clear`; one lock makes each journaled change (note, then do) atomic with respect to the
others and to a rollback.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TypeVar

from harness.disk_journal import FileKey, Loss, UnsyncedJournal

T = TypeVar("T")


def _key(st: os.stat_result) -> FileKey:
    return (st.st_dev, st.st_ino)


def _reader(fd: int) -> Callable[[int, int], bytes]:
    """Reads `n` bytes at `offset` of the file behind `fd`, whatever its access mode."""

    def read(offset: int, n: int) -> bytes:
        readable = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY)
        try:
            return os.pread(readable, n, offset)
        finally:
            os.close(readable)

    return read


class _RootFiles:
    """The rollback's `Storage`: files under the root descriptor, by key."""

    def __init__(self, paths: dict[FileKey, str], root_fd: int) -> None:
        self._paths = paths
        self._root_fd = root_fd

    def _open(self, key: FileKey) -> int:
        return os.open(self._paths[key], os.O_WRONLY, dir_fd=self._root_fd)

    def pwrite(self, key: FileKey, data: bytes, offset: int) -> None:
        fd = self._open(key)
        try:
            os.pwrite(fd, data, offset)
        finally:
            os.close(fd)

    def truncate(self, key: FileKey, size: int) -> None:
        fd = self._open(key)
        try:
            os.ftruncate(fd, size)
        finally:
            os.close(fd)


def reachable_files(root_fd: int) -> dict[FileKey, str]:
    """Every regular file under the root descriptor: key -> path relative to it."""
    found: dict[FileKey, str] = {}
    for directory, _, names, dir_fd in os.fwalk(".", dir_fd=root_fd):
        for name in names:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            found[_key(st)] = os.path.normpath(os.path.join(directory, name))
    return found


class LossKeeper:
    """The journal of the layer's unsynced changes, kept while `on` (thread-safe)."""

    def __init__(self, root_fd: int) -> None:
        self._root_fd = root_fd
        self._lock = threading.RLock()
        self._journal = UnsyncedJournal()
        self.on = False

    def set(self, on: bool) -> None:
        """Start (or stop) journaling, from an empty journal."""
        with self._lock:
            self._journal = UnsyncedJournal()
            self.on = on

    def write(self, fd: int, offset: int, length: int, change: Callable[[], T]) -> T:
        """Journal a write of `length` bytes at `offset` to `fd`, then do it."""
        with self._lock:
            if self.on:
                st = os.fstat(fd)
                self._journal.wrote(_key(st), offset, length, st.st_size, _reader(fd))
            return change()

    def truncate(self, fd: int, length: int, change: Callable[[], T]) -> T:
        """Journal a truncate of `fd` to `length`, then do it."""
        with self._lock:
            if self.on:
                st = os.fstat(fd)
                self._journal.truncated(_key(st), length, st.st_size, _reader(fd))
            return change()

    def created(self, fd: int) -> None:
        """A new file is open on `fd`."""
        with self._lock:
            if self.on:
                self._journal.created(_key(os.fstat(fd)))

    def synced(self, fd: int) -> None:
        """`fd`'s file was fsynced."""
        with self._lock:
            if self.on:
                self._journal.synced(_key(os.fstat(fd)))

    def unlinking(self, relative: str) -> None:
        """`relative` (under the root) is about to be unlinked or replaced by a rename."""
        with self._lock:
            if not self.on:
                return
            try:
                st = os.stat(relative, dir_fd=self._root_fd, follow_symlinks=False)
            except FileNotFoundError:
                return
            if st.st_nlink <= 1:
                self._journal.forget(_key(st))

    def lose(self) -> Loss:
        """Take back every unsynced change of the files still reachable."""
        with self._lock:
            paths = reachable_files(self._root_fd)
            return self._journal.lose(_RootFiles(paths, self._root_fd), paths)
