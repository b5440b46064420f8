"""The fields of partition state znodes that this project does not use, remembered per
znode and zkVersion so that every rewrite of a state znode keeps them.

A state write is always conditional on the zkVersion its writer last saw, so the fields
to keep are those of exactly that version: remembered when this client read or wrote it,
read again (pipelined) when it did not, after a `sync` when this session's server had
not yet seen that version (another session wrote it). A write whose version no longer
matches fails in ZooKeeper anyway, so nothing is kept for it. Guarded by a lock: the
controller event thread and a broker's ISR threads share one client.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkdata.model import UnknownFields
from zkdata.znodes import TopicPartitionStateZNode


class KeptStateFields:
    """Path -> (zkVersion, unknown fields) of the state znodes this client has seen."""

    def __init__(self, kazoo: KazooClient) -> None:
        self._zk = kazoo
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[int, UnknownFields]] = {}

    def saw(self, path: str, version: int, unknown: UnknownFields) -> None:
        """Remember what version `version` of the znode at `path` holds beyond the known
        fields (after a read, or after this client wrote that version)."""
        with self._lock:
            self._seen[path] = (version, unknown)

    def after_writes(self, written: Iterable[tuple[str, int | None, UnknownFields]]) -> None:
        """After writes of many znodes, each `(path, new version or None when the write
        failed, the unknown fields written)`: remember what each written version holds,
        forget the paths whose write failed. One lock for all of them."""
        with self._lock:
            for path, version, unknown in written:
                if version is None:
                    self._seen.pop(path, None)
                else:
                    self._seen[path] = (version, unknown)

    def forget(self, paths: Iterable[str]) -> None:
        """Drop what is remembered of `paths` (a write failed or the znode went away)."""
        with self._lock:
            for path in paths:
                self._seen.pop(path, None)

    def for_writes(self, expected: Mapping[str, int]) -> dict[str, UnknownFields]:
        """For each path, the unknown fields of the version a write expects to replace:
        remembered, or read now (pipelined) for paths not remembered at that version.
        Empty when the znode is gone or holds another version (the write fails then)."""
        with self._lock:
            out = {
                p: self._seen[p][1]
                for p, v in expected.items()
                if p in self._seen and self._seen[p][0] == v
            }
        behind = self._read([p for p in expected if p not in out], expected, out)
        if behind:
            # This session's server had not seen the version yet (another session wrote
            # it): catch up with the leader, then read again.
            for waited in [self._zk.sync_async(p) for p in behind]:
                waited.get()
            self._read(behind, expected, out)
        return out

    def _read(
        self, paths: list[str], expected: Mapping[str, int], out: dict[str, UnknownFields]
    ) -> list[str]:
        """Read `paths` (pipelined) into `out`; return those whose read showed no znode or an
        older version than expected, which a server behind the leader answers."""
        behind = []
        for path, result in [(p, self._zk.get_async(p)) for p in paths]:
            try:
                data, stat = result.get()
            except NoNodeError:
                out[path] = ()
                behind.append(path)
                continue
            version = int(stat.version)
            out[path] = (
                TopicPartitionStateZNode.unknown_fields(data) if version == expected[path] else ()
            )
            if version < expected[path]:
                behind.append(path)
        return behind
