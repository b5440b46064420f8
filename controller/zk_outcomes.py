"""What the controller logs of its dealings with ZooKeeper: a multi of its fenced writes
that committed (`committed_event`), and an event whose handling raised (`failure`), which
is handled again when it lost the connection and decides from what it reads.

Pure; the event thread calls them.
"""

from __future__ import annotations

from kazoo.exceptions import ConnectionLoss, OperationTimeoutError
from kazoo.handlers.threading import KazooTimeoutError

from controller import events as ev
from eventlog import ControllerWritesCommitted, EventFailed
from zkdata.fenced_writes import Committed

__all__ = ["CONNECTION_ERRORS", "committed_event", "failure"]

#: What a ZooKeeper request fails with when the connection (not the session) was lost.
CONNECTION_ERRORS = (ConnectionLoss, OperationTimeoutError, KazooTimeoutError)


def committed_event(broker_id: int, epoch: int, committed: Committed) -> ControllerWritesCommitted:
    """The `controller_writes_committed` of a multi that `broker_id`'s controller, in
    controller epoch `epoch`, committed."""
    return ControllerWritesCommitted(
        controller_id=broker_id,
        controller_epoch=epoch,
        epoch_zk_version=committed.epoch_zk_version,
        zxid=committed.zxid,
        writes=len(committed.ops),
        paths=[op.path for op in committed.ops[:3]],
    )


def failure(
    event: ev.ControllerEvent, error: BaseException, may_retry: bool
) -> tuple[EventFailed, bool]:
    """The `event_failed` of `event`, and whether it is to be handled again: when
    `may_retry`, its handler decides from ZooKeeper (`rereads`) and the error is a lost
    connection, which Kafka's client would have retried until connected."""
    retry = may_retry and event.rereads and isinstance(error, CONNECTION_ERRORS)
    failed = EventFailed(
        event=type(event).__name__, error=f"{type(error).__name__}: {error}", retried=retry
    )
    return failed, retry
