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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
            lambda chunk: self._transaction(chunk, epoch_zk_version).commit_async(),
            MAX_MULTIS_IN_FLIGHT,
        ):
            try:
                raw = list(async_result.get())
            except KazooException:  # connection loss mid-pipeline: redo this chunk with retries
                try:
                    raw = self._zk.retry(
                        lambda c=chunk: list(self._transaction(c, epoch_zk_version).commit())
                    )
                except KazooException as exc:  # given up: these writes fail, the rest stand
                    results.extend(exc for _ in chunk)
                    continue
            self._raise_if_fenced(raw[0])
            if any(isinstance(r, Exception) for r in raw[1:]):
                results.extend(self._one_by_one(chunk, epoch_zk_version))
            else:
                results.extend(_result(r) for r in raw[1:])
        return results

    def _transaction(self, chunk: Sequence[Op], epoch_zk_version: int) -> TransactionRequest:
        tx = self._zk.transaction()
        tx.check(paths.CONTROLLER_EPOCH, epoch_zk_version)
        root = chroot_prefix(self._zk)
        for op in chunk:
            _add(tx, op, root)
        return tx

    def _one_by_one(self, chunk: Sequence[Op], epoch_zk_version: int) -> list[OpResult]:
        pending = [self._transaction([op], epoch_zk_version).commit_async() for op in chunk]
        out: list[OpResult] = []
        for op, async_result in zip(chunk, pending, strict=True):
            try:
                raw = list(async_result.get())
            except KazooException:
                try:
                    raw = self._zk.retry(
                        lambda o=op: list(self._transaction([o], epoch_zk_version).commit())
                    )
                except KazooException as exc:
                    out.append(exc)
                    continue
            self._raise_if_fenced(raw[0])
            out.append(_result(raw[1]))
        return out

    @staticmethod
    def _raise_if_fenced(check_result: object) -> None:
        if isinstance(check_result, BadVersionError | NoNodeError):
            raise ControllerMovedError("/controller_epoch changed: another controller was elected")
