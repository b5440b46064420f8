"""Channel manager: the controller's requests to the brokers.

Written by `controller/channel_manager.py`: `control_request_sent` on
`controller-event-thread` when a request is queued for its sender, the others on the
sender's thread, `controller-to-broker-<id>-send-thread`.

Pure values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from eventlog.event import Event

__all__ = [
    "ControlRequestDropped",
    "ControlRequestSent",
    "ControlResponseReceived",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlRequestSent(Event):
    """The controller queued a control request for a broker.

    `controller-event-thread`, when the request is queued for its sender.

    It marks the hand-over to the sender queue, not the transmission. A request to a broker
    without a sender is not queued and not logged here. The UpdateMetadata requests a new
    controller queues during its failover (step `update_metadata_sent`) name every broker it
    found live; each broker's `request_accepted` of `api` `"UpdateMetadata"` with that
    `controller_epoch` is when it applied them. The pipeline times the failover until the last
    of them ([pipeline.md](pipeline.md)).
    """

    kind: ClassVar[str] = "control_request_sent"

    api: str
    """`"LeaderAndIsr"`, `"UpdateMetadata"` or `"StopReplica"`"""
    broker_id: int
    """the target broker"""
    controller_epoch: int
    """from the request header"""
    broker_epoch: int
    """the target's broker epoch in the header"""
    partitions: int
    """number of partition states in the request"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlResponseReceived(Event):
    """A broker's answer to a control request.

    `controller-to-broker-<id>-send-thread`.

    Transport failures are retried and are not logged as events; only the final answer is. A
    request dropped because its broker was removed gets no `control_response_received`.
    """

    kind: ClassVar[str] = "control_response_received"

    api: str
    """as above"""
    broker_id: int
    """the broker that answered"""
    controller_epoch: int
    """from the request's header"""
    error: str
    """the response's top-level error name, e.g. `"NONE"` or `"STALE_CONTROLLER_EPOCH"`"""
    partition_errors: int
    """partitions whose error is not `NONE` (always `0` for UpdateMetadata)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlRequestDropped(Event):
    """A control request was dropped without an answer.

    `controller-to-broker-<id>-send-thread`.

    A request that did not encode, or whose answer did not decode (`RpcMalformed`), is not
    resent (the same bytes would fail again) and gets no `control_response_received`; the sender
    goes on with its queue.
    """

    kind: ClassVar[str] = "control_request_dropped"

    api: str
    """as for `control_response_received`"""
    broker_id: int
    """as for `control_response_received`"""
    controller_epoch: int
    """as for `control_response_received`"""
    reason: str
    """the error, at most 500 characters"""
