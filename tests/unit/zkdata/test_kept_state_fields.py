"""`KeptStateFields.after_writes`: after a batch of state writes, each written version's
unknown fields are remembered (the next write of that version reads nothing) and the
paths whose write failed are forgotten (the next write of them reads the znode again)."""

from __future__ import annotations

from typing import Any, cast

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkdata.state_fields import KeptStateFields


class _Gone:
    def get(self) -> tuple[bytes, Any]:
        raise NoNodeError()


class _CountingReads:
    """A client whose every znode is gone, counting the reads."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def get_async(self, path: str) -> _Gone:
        self.read.append(path)
        return _Gone()


def test_written_versions_are_remembered_and_failed_writes_forgotten() -> None:
    zk = _CountingReads()
    kept = KeptStateFields(cast(KazooClient, zk))
    extra = (("topic_id", "abc"),)
    kept.saw("/a", 3, extra)
    kept.saw("/b", 3, extra)
    kept.after_writes([("/a", 4, extra), ("/b", None, extra), ("/c", 1, ())])
    assert kept.for_writes({"/a": 4, "/c": 1}) == {"/a": extra, "/c": ()}
    assert zk.read == []  # both remembered at the versions written
    assert kept.for_writes({"/b": 3}) == {"/b": ()}
    assert zk.read == ["/b"]  # the failed write's path was forgotten: read again
