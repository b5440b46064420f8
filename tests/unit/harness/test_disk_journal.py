"""The journal of unsynced changes, without FUSE: over an in-memory storage, a `lose`
leaves every file as it was at its last fsync, and counts what it took back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.disk_journal import FileKey, Loss, UnsyncedJournal

A: FileKey = (1, 10)
B: FileKey = (1, 11)


class MemoryFiles:
    """Files as byte strings, changed through the journal as the layer changes them."""

    def __init__(self) -> None:
        self.files: dict[FileKey, bytearray] = {}
        self.journal = UnsyncedJournal()

    def _read(self, key: FileKey) -> object:
        return lambda offset, n: bytes(self.files[key][offset : offset + n])

    def create(self, key: FileKey) -> None:
        self.files[key] = bytearray()
        self.journal.created(key)

    def write(self, key: FileKey, offset: int, data: bytes) -> None:
        content = self.files[key]
        self.journal.wrote(key, offset, len(data), len(content), self._read(key))  # type: ignore[arg-type]
        self.pwrite(key, data, offset)

    def cut(self, key: FileKey, length: int) -> None:
        self.journal.truncated(key, length, len(self.files[key]), self._read(key))  # type: ignore[arg-type]
        self.truncate(key, length)

    def pwrite(self, key: FileKey, data: bytes, offset: int) -> None:
        content = self.files[key]
        if len(content) < offset:
            content.extend(bytes(offset - len(content)))
        content[offset : offset + len(data)] = data

    def truncate(self, key: FileKey, size: int) -> None:
        content = self.files[key]
        del content[size:]
        content.extend(bytes(size - len(content)))


def test_appends_since_the_last_fsync_are_lost() -> None:
    disk = MemoryFiles()
    disk.files[A] = bytearray(b"synced")
    disk.write(A, 6, b"-one")
    disk.write(A, 10, b"-two")
    assert disk.journal.lose(disk, [A]) == Loss(1, 8)
    assert disk.files[A] == b"synced"


def test_an_fsync_makes_what_came_before_it_durable() -> None:
    disk = MemoryFiles()
    disk.files[A] = bytearray()
    disk.write(A, 0, b"kept")
    disk.journal.synced(A)
    disk.write(A, 4, b"lost")
    disk.journal.lose(disk, [A])
    assert disk.files[A] == b"kept"


def test_an_overwrite_gets_its_old_bytes_back() -> None:
    disk = MemoryFiles()
    disk.files[A] = bytearray(b"0123456789")
    disk.write(A, 8, b"abcd")
    disk.write(A, 2, b"xy")
    disk.journal.lose(disk, [A])
    assert disk.files[A] == b"0123456789"


def test_a_truncate_is_taken_back_with_the_cut_tail() -> None:
    disk = MemoryFiles()
    disk.files[A] = bytearray(b"0123456789")
    disk.cut(A, 3)
    disk.cut(A, 12)
    assert disk.journal.lose(disk, [A]) == Loss(1, 7 + 9)
    assert disk.files[A] == b"0123456789"


def test_a_file_created_and_renamed_into_place_is_left_empty() -> None:
    disk = MemoryFiles()
    disk.create(B)
    disk.write(B, 0, b"42\n")
    disk.journal.forget(A)  # the rename replaced the old checkpoint
    assert disk.journal.lose(disk, [B]) == Loss(1, 3)
    assert disk.files[B] == b""


def test_files_no_longer_reachable_are_skipped_and_the_journal_cleared() -> None:
    disk = MemoryFiles()
    disk.files[A] = bytearray(b"a")
    disk.write(A, 1, b"b")
    assert disk.journal.lose(disk, []) == Loss(0, 0)
    assert len(disk.journal) == 0
    assert disk.files[A] == b"ab"


changes = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.integers(0, 40), st.binary(min_size=1, max_size=12)),
        st.tuples(st.just("cut"), st.integers(0, 40), st.just(b"")),
        st.tuples(st.just("sync"), st.just(0), st.just(b"")),
    ),
    max_size=30,
)


@given(st.binary(max_size=30), changes)
def test_a_loss_restores_the_file_as_of_its_last_fsync(
    initial: bytes, steps: list[tuple[str, int, bytes]]
) -> None:
    disk = MemoryFiles()
    disk.files[A] = bytearray(initial)
    durable = bytes(initial)
    for op, offset, data in steps:
        if op == "write":
            disk.write(A, offset, data)
        elif op == "cut":
            disk.cut(A, offset)
        else:
            disk.journal.synced(A)
            durable = bytes(disk.files[A])
    disk.journal.lose(disk, [A])
    assert bytes(disk.files[A]) == durable
