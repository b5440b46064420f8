"""Epoch-fenced, pipelined ZooKeeper writes of the active controller (docs/fencing.md).

Every write travels in a multi that first checks `/controller_epoch` at the zkVersion the
controller won its election with; a failed check raises `ControllerMovedError`, the one
signal to resign. Many writes go in few multis (`multi_chunks`): at most
`MAX_OPS_PER_MULTI` operations and `MAX_MULTI_BYTES` of paths and data each, so that a
multi stays under ZooKeeper's 1 MiB request limit (`jute.maxbuffer`) whatever the topic
names and znode sizes; the multis are pipelined, at most `MAX_MULTIS_IN_FLIGHT` at a
time (`pipelined_reads.pipelined`: a ZooKeeper connection flooded with 100 multis of
1,000 writes at once times out on a busy box). When
a batch fails on one of its own operations (e.g. BADVERSION of one state znode), that
batch is re-run one write per multi, pipelined, so that each write gets its own result;
a batch that cannot be retried fails its writes alone, the others stand (`write`).
Blocks the calling thread (the controller event thread).

Every multi that commits is reported, with the zxid it committed at, to the observer
registered for its ZooKeeper client (`observe_commits`): the controller logs each, so
that a write of a superseded controller shows wherever it lands (docs/fencing.md). The
zxid is the reply header's: ZooKeeper answers a write with the transaction's own zxid
(its final processor applies and answers committed writes one at a time), and kazoo
hands results over without headers, so the multi's result records the client's
`last_zxid` at the moment the connection thread sets it, just after reading that header.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient, TransactionRequest
from kazoo.exceptions import BadVersionError, KazooException, NoNodeError
from kazoo.protocol import paths as kazoo_paths
from kazoo.protocol import serialization
from kazoo.protocol.states import ZnodeStat

from zkdata import paths
from zkdata.errors import ControllerMovedError
from zkdata.pipelined_reads import pipelined

#: The fencing zkVersion that fences nothing: ZooKeeper's check at version -1 passes
#: whatever `/controller_epoch`'s version is (bug switch `kafka-6082`, docs/bugs.md).
ANY_EPOCH_VERSION = -1
#: Operations per multi; ~100 bytes each keeps a multi far below the 1 MiB request limit.
MAX_OPS_PER_MULTI = 1000
#: Bytes of paths and data per multi: half of ZooKeeper's default `jute.maxbuffer` (1 MiB),
#: leaving room for the per-operation framing that `op_bytes` only estimates.
MAX_MULTI_BYTES = 512 * 1024
#: Multis outstanding at once on the session (8,000 small writes, at most 4 MiB).
MAX_MULTIS_IN_FLIGHT = 8
#: Framing of one operation in a multi, over its path and data (header, lengths, version,
#: ACL of a create): an upper estimate.
OP_OVERHEAD_BYTES = 64


@dataclass(frozen=True, slots=True)
class Create:
    """Create a persistent znode."""

    path: str
    data: bytes


@dataclass(frozen=True, slots=True)
class SetData:
    """Set a znode's data if its zkVersion is still `version`."""

    path: str
    data: bytes
    version: int


@dataclass(frozen=True, slots=True)
class Delete:
    """Delete a znode (any version when `version` is -1)."""

    path: str
    version: int = -1


Op = Create | SetData | Delete


class NewVersion(int):
    """A SetData's outcome: the znode's new zkVersion, as an int (what callers compare and
    store), carrying `zxid`, the ZooKeeper transaction id the write committed at (the
    mzxid of the Stat the multi returned). Zxids order every write of the ensemble, so
    they tell whether a write committed before or after another (docs/events.md)."""

    zxid: int

    def __new__(cls, version: int, zxid: int) -> NewVersion:
        made = super().__new__(cls, version)
        made.zxid = zxid
        return made


#: One write's outcome: the new zkVersion for SetData (a `NewVersion`), the path for Create,
#: True for Delete, or the kazoo exception that failed it (NodeExistsError, BadVersionError,
#: NoNodeError...).
OpResult = int | str | bool | Exception


def op_bytes(op: Op) -> int:
    """An upper estimate of what `op` adds to a multi request on the wire."""
    data = op.data if isinstance(op, Create | SetData) else b""
    return len(op.path.encode()) + len(data) + OP_OVERHEAD_BYTES


def multi_chunks(
    ops: Sequence[Op], max_ops: int = MAX_OPS_PER_MULTI, max_bytes: int = MAX_MULTI_BYTES
) -> list[Sequence[Op]]:
    """`ops` cut, in order, into runs of at most `max_ops` operations whose `op_bytes` add
    up to at most `max_bytes`; an operation larger than `max_bytes` goes alone (ZooKeeper
    then refuses it, as it would refuse it anywhere). Pure."""
    chunks: list[Sequence[Op]] = []
    start = 0
    used = 0
    for i, op in enumerate(ops):
        size = op_bytes(op)
        if i > start and (i - start >= max_ops or used + size > max_bytes):
            chunks.append(ops[start:i])
            start = i
            used = 0
        used += size
    if start < len(ops):
        chunks.append(ops[start:])
    return chunks


def committed_zxid(result: object) -> int | None:
    """The zxid a SetData committed at, or None for any other outcome (or a plain int, as
    test doubles return)."""
    return result.zxid if isinstance(result, NewVersion) else None


def _add(tx: TransactionRequest, op: Op, root: str) -> None:
    match op:
        case Create(path, data):
            tx.create(path, data)
        case SetData(path, data, version) if _canonical(path):
            # what kazoo's `set_data` adds, without normalizing the chroot and the path
            # again for each of thousands of state znodes (a fifth of the time)
            tx.operations.append(serialization.SetData(root + path, data, version))
        case SetData(path, data, version):
            tx.set_data(path, data, version=version)
        case Delete(path, version):
            tx.delete(path, version=version)


def _canonical(path: str) -> bool:
    """An absolute path that kazoo's normalization leaves as it is."""
    return path.startswith("/") and not path.endswith("/") and "//" not in path and "/." not in path


def chroot_prefix(zk: KazooClient) -> str:
    """What kazoo puts before a canonical path of `zk`'s (`''` without a chroot)."""
    if not zk.chroot:
        return ""
    root: str = kazoo_paths.normpath(kazoo_paths.join("/", zk.chroot))
    return root.rstrip("/")


def _result(raw: object) -> OpResult:
    if isinstance(raw, ZnodeStat):
        return NewVersion(int(raw.version), int(raw.mzxid))
    if isinstance(raw, Exception):
        return raw
    if isinstance(raw, str | bool):
        return raw
    raise TypeError(f"unexpected multi result {raw!r}")


@dataclass(frozen=True, slots=True)
class Committed:
    """One multi that committed: its writes (the epoch check aside), the zkVersion it
    checked `/controller_epoch` at (-1 checks nothing) and the zxid it committed at."""

    ops: tuple[Op, ...]
    epoch_zk_version: int
    zxid: int


#: Told of each multi that committed, on the thread that wrote (`observe_commits`).
CommitObserver = Callable[[Committed], None]
_OBSERVERS: weakref.WeakKeyDictionary[KazooClient, CommitObserver] = weakref.WeakKeyDictionary()


def observe_commits(kazoo: KazooClient, observer: CommitObserver | None) -> None:
    """Tell `observer` of every multi a `FencedWriter` on `kazoo` commits from now on
    (None: no longer). One observer per client."""
    if observer is None:
        _OBSERVERS.pop(kazoo, None)
    else:
        _OBSERVERS[kazoo] = observer


def _commit_async(kazoo: KazooClient, tx: TransactionRequest) -> Any:
    """`tx.commit_async()`, whose result also carries `zxid`: the client's `last_zxid`
    when the connection thread set the result, which is the reply header's zxid (kazoo
    sets `last_zxid` from each header just before it sets that reply's result), or None
    when the multi failed."""
    result = kazoo.handler.async_result()
    result.zxid = None
    plain_set = result.set

    def set_with_zxid(value: object = None) -> None:
        result.zxid = kazoo.last_zxid
        plain_set(value)

    result.set = set_with_zxid
    # what `commit_async` does, with the result above
    kazoo._call(serialization.Transaction(tx.operations), result)
    return result


class FencedWriter:
    """Runs writes guarded by the controller epoch's zkVersion."""

    def __init__(self, kazoo: KazooClient) -> None:
        self._zk = kazoo

    def write(self, ops: Sequence[Op], epoch_zk_version: int) -> list[OpResult]:
        """Apply `ops` (independently of each other) and return one result per op, in order.

        Raises `ControllerMovedError` if `/controller_epoch` is no longer at
        `epoch_zk_version`. A write ZooKeeper refused (NOAUTH, BADVERSION, NONODE...) and a
        write whose multi could not be retried (the client's retry deadline passed, the
        session expired) fail alone: their result is the exception, and the writes of the
        other multis stand, as Kafka's batched writes answer per znode. The outcome of a
        write given up on is unknown (it may have committed before the connection dropped);
        a later conditional write of the same znode finds out by its zkVersion.
        """
        results: list[OpResult] = []
        for chunk, async_result in pipelined(
            multi_chunks(ops),
            lambda chunk: self._commit_async(chunk, epoch_zk_version),
            MAX_MULTIS_IN_FLIGHT,
        ):
            try:
                raw = list(async_result.get())
                zxid = async_result.zxid
            except KazooException:  # connection loss mid-pipeline: redo this chunk with retries
                try:
                    raw, zxid = self._zk.retry(self._commit, chunk, epoch_zk_version)
                except KazooException as exc:  # given up: these writes fail, the rest stand
                    results.extend(exc for _ in chunk)
                    continue
            self._raise_if_fenced(raw[0])
            if any(isinstance(r, Exception) for r in raw[1:]):
                results.extend(self._one_by_one(chunk, epoch_zk_version))
            else:
                self._committed(chunk, epoch_zk_version, zxid)
                results.extend(_result(r) for r in raw[1:])
        return results

    def _commit_async(self, chunk: Sequence[Op], epoch_zk_version: int) -> Any:
        return _commit_async(self._zk, self._transaction(chunk, epoch_zk_version))

    def _commit(
        self, chunk: Sequence[Op], epoch_zk_version: int
    ) -> tuple[list[object], int | None]:
        """Commit one multi and wait: its results and the zxid it committed at."""
        async_result = self._commit_async(chunk, epoch_zk_version)
        return list(async_result.get()), async_result.zxid

    def _committed(self, chunk: Sequence[Op], epoch_zk_version: int, zxid: int | None) -> None:
        observer = _OBSERVERS.get(self._zk)
        if observer is not None and zxid is not None:
            observer(Committed(tuple(chunk), epoch_zk_version, zxid))

    def _transaction(self, chunk: Sequence[Op], epoch_zk_version: int) -> TransactionRequest:
        tx = self._zk.transaction()
        tx.check(paths.CONTROLLER_EPOCH, epoch_zk_version)
        root = chroot_prefix(self._zk)
        for op in chunk:
            _add(tx, op, root)
        return tx

    def _one_by_one(self, chunk: Sequence[Op], epoch_zk_version: int) -> list[OpResult]:
        pending = [self._commit_async([op], epoch_zk_version) for op in chunk]
        out: list[OpResult] = []
        for op, async_result in zip(chunk, pending, strict=True):
            try:
                raw = list(async_result.get())
                zxid = async_result.zxid
            except KazooException:
                try:
                    raw, zxid = self._zk.retry(self._commit, [op], epoch_zk_version)
                except KazooException as exc:
                    out.append(exc)
                    continue
            self._raise_if_fenced(raw[0])
            if not isinstance(raw[1], Exception):
                self._committed([op], epoch_zk_version, zxid)
            out.append(_result(raw[1]))
        return out

    @staticmethod
    def _raise_if_fenced(check_result: object) -> None:
        if isinstance(check_result, BadVersionError | NoNodeError):
            raise ControllerMovedError("/controller_epoch changed: another controller was elected")
