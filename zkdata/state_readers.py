"""Reader processes: the partition-state znodes of a large context load read by helper
processes alongside the calling thread, each helper with a ZooKeeper session of its own.

One process reads about as fast as its own CPU lets it: kazoo's connection thread and the
decoding of each znode share one interpreter's GIL (about 90 µs a znode on a 2-vCPU host).
`StateReaders.read` cuts the partitions into chunks of `CHUNK`; the calling thread reads
chunks itself (`read_here`, the client's own pipelined read) and hands the others to the
helpers as they become ready, so a helper that starts late or not at all only takes less
work. A helper syncs its server with the ensemble's leader (`sync`) before each chunk, so
it reads nothing older than what the caller's session could read, decodes each znode with
the same codec and answers compact tuples, which the caller turns back into value
objects. A helper that dies, answers garbage or takes longer than `CHUNK_TIMEOUT_S` is
stopped and its chunk read by the caller: the result is the same as one process's, only
sooner.

Helpers are started for one `read` of at least `min_partitions` partitions (below that
their start costs more than they save) and stopped at its end. Each is
`python -m zkdata.state_readers` with two pipes (`multiprocessing.connection`); the
ZooKeeper address and credentials travel over the pipe, never in argv. A helper exits when
its pipe closes, so it never outlives a killed caller by more than its current chunk.

Threads: `read` blocks the calling thread (the controller's event thread); a daemon
thread, `state-reader-reaper`, waits for each stopped helper to exit.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from kazoo.client import KazooClient

from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from zkdata import paths
from zkdata.errors import ZnodeFormatError
from zkdata.kazoo_handler import PollingHandler
from zkdata.model import UnknownFields
from zkdata.pipelined_reads import Reads, read_many
from zkdata.znodes import TopicPartitionStateZNode

log = logging.getLogger(__name__)

#: Partitions a helper is handed at a time.
CHUNK = 2_000
#: Helpers a large read starts: on a 2-vCPU host, one helper read 100,000 states in 8.5
#: to 9.0 s and two in 8.1 to 8.6 s, where the caller alone took 9.7 to 11.4 s.
HELPERS = 2
#: Below this many partitions one process reads them all: a helper is ready to read after
#: about a quarter of a second, when the caller has read some 3,000 states.
MIN_PARTITIONS = 5_000
#: How long a helper may take to start and connect (at most its session timeout), or to
#: answer one chunk, before it is stopped.
START_TIMEOUT_S = 15.0
CHUNK_TIMEOUT_S = 30.0
#: How long a stopped helper may take to close its session and exit before it is killed.
REAP_TIMEOUT_S = 5.0

_READY = "ready"

StateAndUnknown = tuple[LeaderIsrAndControllerEpoch, UnknownFields]
ReadHere = Callable[[Sequence[TopicPartition]], Reads[TopicPartition, StateAndUnknown]]
"""The caller's own read of some partitions' states, with each state's unknown fields."""


def read_states(
    zk: KazooClient, partitions: Iterable[TopicPartition]
) -> Reads[TopicPartition, StateAndUnknown]:
    """The state znodes of `partitions` on session `zk`, pipelined, each decoded with the
    fields the project does not use (one process's read: the caller's and a helper's)."""
    return read_many(
        zk,
        partitions,
        lambda tp: paths.partition_state(tp.topic, tp.partition),
        lambda data, stat: TopicPartitionStateZNode.decode_keeping_unknown(data, int(stat.version)),
    )


@dataclass(frozen=True, slots=True)
class ReaderSettings:
    """Where helpers connect (`connect`, chroot included), their session timeout, the
    digest `auth_data` of the caller's session, how many helpers a large read starts and
    from how many partitions on, and the caller's kazoo TLS options (file paths; none:
    plaintext)."""

    connect: str
    session_timeout_s: float = 10.0
    auth_data: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    helpers: int = HELPERS
    min_partitions: int = MIN_PARTITIONS
    tls_options: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True, slots=True)
class ReadStats:
    """How the last read went: helpers started, and partitions they read."""

    helpers_started: int = 0
    read_by_helpers: int = 0


class StateReaders:
    """Starts helpers for large reads of partition states (see the module docstring)."""

    def __init__(self, settings: ReaderSettings) -> None:
        self.settings = settings
        self.last = ReadStats()

    def read(
        self,
        partitions: Sequence[TopicPartition],
        read_here: ReadHere,
        *,
        caller_reads: bool = True,
    ) -> Reads[TopicPartition, StateAndUnknown]:
        """The states of `partitions` (decoded, with their unknown fields), read by the
        caller (`read_here`) and, for a large read, by helpers as well. Without
        `caller_reads` the caller only reads what no live helper can."""
        if self.settings.helpers < 1 or len(partitions) < self.settings.min_partitions:
            self.last = ReadStats()
            return read_here(partitions)
        helpers = [
            h for h in (_Helper.start(self.settings) for _ in range(self.settings.helpers)) if h
        ]
        try:
            return self._read_with(helpers, partitions, read_here, caller_reads)
        finally:
            for helper in helpers:
                helper.stop()

    def _read_with(
        self,
        helpers: list[_Helper],
        partitions: Sequence[TopicPartition],
        read_here: ReadHere,
        caller_reads: bool,
    ) -> Reads[TopicPartition, StateAndUnknown]:
        chunks = deque(partitions[i : i + CHUNK] for i in range(0, len(partitions), CHUNK))
        found: dict[TopicPartition, StateAndUnknown] = {}
        malformed: dict[TopicPartition, ZnodeFormatError] = {}
        by_helpers = 0
        while chunks or any(h.chunk is not None for h in helpers):
            alive = [h for h in helpers if h.alive]
            mine = bool(chunks) and (caller_reads or not alive)
            for helper in _wait_for(alive, 0.0 if mine else 0.1):
                answer = helper.take()
                if answer is not None:
                    found.update(answer.found)
                    malformed.update(answer.malformed)
                    by_helpers += len(answer.found) + len(answer.malformed)
            for helper in helpers:
                if helper.alive and helper.overdue():
                    helper.fail("no answer in time")
                if not helper.alive and helper.chunk is not None:
                    chunks.appendleft(helper.chunk)  # the caller or another helper reads it
                    helper.chunk = None
                if helper.idle and chunks:
                    helper.give(chunks.pop())
            if chunks and (caller_reads or not any(h.alive for h in helpers)):
                here = read_here(chunks.popleft())
                found.update(here.found)
                malformed.update(here.malformed)
        self.last = ReadStats(len(helpers), by_helpers)
        # in the order asked, as one process's read has them
        ordered = {tp: found[tp] for tp in partitions if tp in found}
        return Reads(ordered, {tp: malformed[tp] for tp in partitions if tp in malformed})


def _wait_for(helpers: list[_Helper], timeout_s: float) -> list[_Helper]:
    """The helpers with something to read on their pipe (an answer, readiness or EOF)."""
    by_connection = {h.incoming: h for h in helpers}
    return [by_connection[c] for c in wait(list(by_connection), timeout_s)]  # type: ignore[index]


@dataclass(slots=True)
class _Answer:
    found: dict[TopicPartition, StateAndUnknown]
    malformed: dict[TopicPartition, ZnodeFormatError]


class _Helper:
    """The caller's side of one helper process."""

    def __init__(
        self, process: subprocess.Popen[bytes], outgoing: Connection, incoming: Connection
    ) -> None:
        self._process = process
        self._outgoing = outgoing
        self.incoming = incoming
        self.ready = False
        self.alive = True
        self.chunk: Sequence[TopicPartition] | None = None
        self._deadline = time.monotonic() + START_TIMEOUT_S

    @classmethod
    def start(cls, settings: ReaderSettings) -> _Helper | None:
        """Start `python -m zkdata.state_readers` and send it `settings`; returns at once.
        None when no process could be started (the caller reads without it)."""
        child_reads, parent_writes = os.pipe()
        parent_reads, child_writes = os.pipe()
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "zkdata.state_readers", str(child_reads), str(child_writes)],
                pass_fds=(child_reads, child_writes),
                stdin=subprocess.DEVNULL,
            )  # the broker's environment and directory: `zkdata` imports as it does here
        except OSError as exc:
            log.warning("no state reader process: %s", exc)
            os.close(parent_writes)
            os.close(parent_reads)
            return None
        finally:
            os.close(child_reads)
            os.close(child_writes)
        helper = cls(
            process,
            Connection(parent_writes, readable=False),
            Connection(parent_reads, writable=False),
        )
        try:
            helper._outgoing.send(settings)
        except OSError as exc:
            helper.fail(f"could not send settings: {exc}")
        return helper

    @property
    def idle(self) -> bool:
        """Ready for a chunk."""
        return self.alive and self.ready and self.chunk is None

    def give(self, chunk: Sequence[TopicPartition]) -> None:
        """Hand `chunk` to the helper."""
        try:
            self._outgoing.send([(tp.topic, tp.partition) for tp in chunk])
        except OSError as exc:
            self.chunk = chunk
            self.fail(f"could not send a chunk: {exc}")
            return
        self.chunk = chunk
        self._deadline = time.monotonic() + CHUNK_TIMEOUT_S

    def overdue(self) -> bool:
        """Not ready, or not done with its chunk, in time."""
        busy = not self.ready or self.chunk is not None
        return busy and time.monotonic() > self._deadline

    def take(self) -> _Answer | None:
        """Read what the helper sent: readiness (None), its chunk's answer, or its end."""
        try:
            message = self.incoming.recv()
        except (EOFError, OSError) as exc:
            self.fail(f"pipe closed ({type(exc).__name__})")
            return None
        if message == _READY:
            self.ready = True
            return None
        if self.chunk is None:
            self.fail("an answer nobody asked for")
            return None
        try:
            answer = _decode_answer(message)
        except (TypeError, ValueError) as exc:
            self.fail(f"an answer that does not decode: {exc}")
            return None
        self.chunk = None
        return answer

    def fail(self, reason: str) -> None:
        """Give up on the helper (its chunk, if any, goes back to the caller)."""
        if self.alive:
            log.warning("state reader process %d stopped: %s", self._process.pid, reason)
        self.alive = False
        self.stop()

    def stop(self) -> None:
        """Close the pipes: the helper ends its session and exits. A daemon thread reaps
        it (killing it after `REAP_TIMEOUT_S`), so the caller never waits for it."""
        self.alive = False
        if self.incoming.closed:
            return
        for connection in (self._outgoing, self.incoming):
            connection.close()
        threading.Thread(
            target=_reap, args=(self._process,), name="state-reader-reaper", daemon=True
        ).start()


def _reap(process: subprocess.Popen[bytes]) -> None:
    try:
        process.wait(timeout=REAP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _encode_answer(
    found: dict[TopicPartition, StateAndUnknown], malformed: dict[TopicPartition, ZnodeFormatError]
) -> tuple[list[tuple[Any, ...]], list[tuple[str, int, str]]]:
    """A helper's answer as plain tuples (a tenth of pickling the value objects)."""
    states = []
    for tp, (state, unknown) in found.items():
        lai = state.leader_and_isr
        states.append(
            (
                tp.topic,
                tp.partition,
                lai.leader,
                lai.leader_epoch,
                lai.isr,
                lai.zk_version,
                state.controller_epoch,
                unknown,
            )
        )
    errors = [(tp.topic, tp.partition, error.reason) for tp, error in malformed.items()]
    return states, errors


def _decode_answer(message: Any) -> _Answer:
    states, errors = message
    found: dict[TopicPartition, StateAndUnknown] = {}
    for topic, partition, leader, epoch, isr, zk_version, controller_epoch, unknown in states:
        state = LeaderIsrAndControllerEpoch(
            LeaderAndIsr(leader, epoch, tuple(isr), zk_version), controller_epoch
        )
        found[TopicPartition(topic, partition)] = (state, tuple(unknown))
    malformed = {
        TopicPartition(topic, partition): ZnodeFormatError(
            reason, paths.partition_state(topic, partition)
        )
        for topic, partition, reason in errors
    }
    return _Answer(found, malformed)


def _serve(incoming: Connection, outgoing: Connection) -> int:
    """The helper: connect as `ReaderSettings` say, then answer chunks until the pipe
    closes."""
    settings: ReaderSettings = incoming.recv()
    zk = KazooClient(
        hosts=settings.connect,
        timeout=settings.session_timeout_s,
        handler=PollingHandler(),
        auth_data=list(settings.auth_data) or None,
        **dict(settings.tls_options),
    )
    zk.start(timeout=min(START_TIMEOUT_S, settings.session_timeout_s))
    try:
        outgoing.send(_READY)
        while True:
            try:
                chunk = incoming.recv()
            except EOFError:
                return 0
            zk.sync("/")
            reads = read_states(
                zk, [TopicPartition(topic, partition) for topic, partition in chunk]
            )
            outgoing.send(_encode_answer(reads.found, reads.malformed))
    finally:
        zk.stop()
        zk.close()


if __name__ == "__main__":
    sys.exit(
        _serve(
            Connection(int(sys.argv[1]), writable=False),
            Connection(int(sys.argv[2]), readable=False),
        )
    )
