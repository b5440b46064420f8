"""`FetchSessionHandler`: a follower's side of one incremental fetch session (KIP-227).

Each round the replica fetcher says which partitions it wants and from where
(`build`); the handler answers with the Fetch to send: in full (every partition, session
epoch 0) when there is no session yet, else only the partitions whose fetch state
(offset, leader epoch, max records) differs from what the session holds, plus the ones no
longer wanted as `forgotten`. A fetcher that knows which partitions may have changed
since its last round names them (`changed`), and only those are compared, so that a round
costs the partitions that moved, not every partition the session holds. The leader's
answer (`handle_response`) or a failed call (`handle_error`) moves the session on: the
next epoch after a success, a fresh full fetch after a session error
(FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH), any other request-level error
or a lost answer (whose records and high watermarks the follower never saw, so the
leader must not count them as sent). Every fetch asks for records as the leader's log
stores them (`encoded_records`), which the follower copies into its own log without
converting them record by record.

Pure state, used by one fetcher thread (`replica-fetcher-<leader id>`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors

#: Request-level errors after which the session is dropped and the next fetch opens a new one.
SESSION_ERRORS = {Errors.FETCH_SESSION_ID_NOT_FOUND, Errors.INVALID_FETCH_SESSION_EPOCH}


@dataclass(frozen=True, slots=True)
class _Pending:
    """A request sent and not yet answered: the session state it leads to (a full fetch:
    `wanted`; an incremental one: the session with `sent` and without `forgotten`)."""

    full: bool
    wanted: dict[TopicPartition, m.FetchPartition]
    sent: tuple[m.FetchPartition, ...] = ()
    forgotten: tuple[TopicPartition, ...] = ()


class FetchSessionHandler:
    """The follower's view of its session with one leader."""

    def __init__(self, replica_id: int, max_wait_ms: int) -> None:
        self.replica_id = replica_id
        self.max_wait_ms = max_wait_ms
        self.session_id = m.NO_SESSION_ID
        #: The epoch of the next request (`INITIAL_EPOCH`: the next fetch is full).
        self.epoch = m.INITIAL_EPOCH
        self._session: dict[TopicPartition, m.FetchPartition] = {}
        self._pending: _Pending | None = None

    @property
    def partitions(self) -> Mapping[TopicPartition, m.FetchPartition]:
        """The partitions the leader's session holds, as last acknowledged."""
        return self._session

    def build(
        self,
        wanted: Mapping[TopicPartition, m.FetchPartition],
        changed: Collection[TopicPartition] | None = None,
    ) -> m.FetchRequest:
        """The next Fetch for the partitions in `wanted` (all of them, at their offsets).
        `changed`: the only partitions whose state may differ from the last `build` (added,
        moved, or no longer wanted); None compares every partition."""
        full = self.epoch == m.INITIAL_EPOCH
        session = self._session
        if full:
            sent = tuple(wanted.values())
            forgotten: tuple[TopicPartition, ...] = ()
            pending = _Pending(True, dict(wanted))
        else:
            # the fetcher hands the same object while a partition's state stays the same
            if changed is None:
                sent = tuple(
                    f
                    for tp, f in wanted.items()
                    if (held := session.get(tp)) is not f and held != f
                )
                forgotten = tuple(tp for tp in session if tp not in wanted)
            else:
                sent = tuple(
                    f
                    for tp in changed
                    if (f := wanted.get(tp)) is not None
                    and (held := session.get(tp)) is not f
                    and held != f
                )
                forgotten = tuple(tp for tp in changed if tp not in wanted and tp in session)
            pending = _Pending(False, {}, sent, forgotten)
        self._pending = pending
        return m.FetchRequest(
            sent,
            replica_id=self.replica_id,
            max_wait_ms=self.max_wait_ms,
            session_id=self.session_id,
            session_epoch=self.epoch,
            forgotten=forgotten,
            encoded_records=True,
        )

    def handle_response(self, response: m.FetchResponse) -> bool:
        """Move the session on after the leader answered the last `build`; whether the
        answer's partitions may be used (False after a request-level error)."""
        pending, self._pending = self._pending, None
        if pending is None:
            raise RuntimeError("a fetch answer without a request built for it")
        if response.error is not Errors.NONE:
            if response.error is Errors.FETCH_SESSION_ID_NOT_FOUND:
                self.session_id = m.NO_SESSION_ID
            self._restart()
            return False
        if pending.full:
            self.session_id = response.session_id
            self.epoch = 1 if response.session_id != m.NO_SESSION_ID else m.INITIAL_EPOCH
            self._session = pending.wanted
        else:
            self.epoch = 1 if self.epoch >= 2**31 - 1 else self.epoch + 1
            for fetch in pending.sent:
                self._session[fetch.topic_partition] = fetch
            for tp in pending.forgotten:
                self._session.pop(tp, None)
        return True

    def handle_error(self) -> None:
        """The last fetch failed in transport: its answer is lost, so the next fetch is
        full and replaces the session (closing it on the leader)."""
        self._pending = None
        self._restart()

    def _restart(self) -> None:
        self.epoch = m.INITIAL_EPOCH
        self._session = {}
