"""`KeptStateFields.after_writes`: after a batch of state writes, each written version's
unknown fields are remembered (the next write of that version reads nothing) and the
paths whose write failed are forgotten (the next write of them reads the znode again).
And `for_writes` on a session whose server is behind: a read that finds no znode or an
older version is made again after a `sync`."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any, cast

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkdata.state_fields import KeptStateFields


class _Gone:
    def get(self) -> tuple[bytes, Any]:
        raise NoNodeError()


class _Done:
    def __init__(self, value: Any = None) -> None:
        self._value = value

    def get(self) -> Any:
        return self._value


class _CountingReads:
    """A client whose every znode is gone, counting the reads and syncs."""

    def __init__(self) -> None:
        self.read: list[str] = []
        self.synced: list[str] = []

    def get_async(self, path: str) -> Any:
        self.read.append(path)
        return _Gone()

    def sync_async(self, path: str) -> _Done:
        self.synced.append(path)
        return _Done(path)


class _Behind(_CountingReads):
    """A client whose server shows version 0 of every znode until a sync, then version 1
    with an unknown field."""

    def get_async(self, path: str) -> _Done:
        self.read.append(path)
        version = 1 if path in self.synced else 0
        body: dict[str, object] = {"controller_epoch": 1, "leader": 1, "version": 1}
        body.update(leader_epoch=2, isr=[1])
        if version:
            body["leader_recovery_state"] = 0
        return _Done((json.dumps(body).encode(), SimpleNamespace(version=version)))


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
    # the failed write's path was forgotten: read again, and again after a sync
    assert (zk.read, zk.synced) == (["/b", "/b"], ["/b"])


def test_a_read_behind_the_expected_version_is_made_again_after_a_sync() -> None:
    zk = _Behind()
    kept = KeptStateFields(cast(KazooClient, zk))
    assert kept.for_writes({"/s": 1}) == {"/s": (("leader_recovery_state", "0"),)}
    assert (zk.read, zk.synced) == (["/s", "/s"], ["/s"])
    assert kept.for_writes({"/t": 0}) == {"/t": ()}  # found as expected: no sync
    assert zk.synced == ["/s"]
