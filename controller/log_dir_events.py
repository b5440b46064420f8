"""The controller's side of log-directory failures (KIP-112; Kafka's
LogDirEventNotification event and `onBrokerLogDirFailure`): a broker whose log directory
failed records it under `/log_dir_event_notification`; the active controller sends every
replica on the notifying brokers to OnlineReplica, which sends each broker a LeaderAndIsr
for all its replicas, and deletes the notifications. The broker answers
KAFKA_STORAGE_ERROR for the replicas it lost, and `BrokerChanges.process_leader_and_isr_response`
takes those offline and elects their partitions' leaders elsewhere. Event thread only.
"""

from __future__ import annotations

from collections.abc import Mapping

from controller import events as ev
from controller.context import ControllerContext
from controller.replica_state_machine import ReplicaStateMachine
from controller.states import ReplicaState
from controller.watchers import Watchers
from eventlog import EventLog, LogDirEventHandled, MalformedZnode
from zkdata.client import KafkaZkClient
from zkdata.log_dir_event_notifications import (
    delete_log_dir_event_notifications,
    read_log_dir_event_notifications,
)


def notifying_brokers(notifications: Mapping[str, int]) -> list[int]:
    """The brokers named by `notifications` (child name -> broker id), each once, sorted."""
    return sorted(set(notifications.values()))


def process_log_dir_event_notification(
    ctx: ControllerContext,
    zk: KafkaZkClient,
    watchers: Watchers,
    event_log: EventLog,
    replicas: ReplicaStateMachine,
) -> None:
    """Re-arm the child watch, read the notifications, send every replica on the brokers
    they name to OnlineReplica (its LeaderAndIsr asks the broker which it still holds),
    and delete the notifications read (malformed ones too), epoch-fenced, even when the
    state change failed, as Kafka does."""
    notes = read_log_dir_event_notifications(zk, watchers(ev.LogDirEventNotification()))
    for child, error in notes.malformed.items():
        event_log.emit(MalformedZnode(path=error.path or child, reason=error.reason))
    handled = sorted(set(notes.found) | set(notes.malformed))
    if not handled:
        return
    brokers = notifying_brokers(notes.found)
    on_brokers = ctx.replicas_on_brokers(brokers)
    try:
        replicas.handle_state_changes(on_brokers, ReplicaState.ONLINE)
    finally:
        delete_log_dir_event_notifications(zk, handled, ctx.epoch_zk_version)
    event_log.emit(
        LogDirEventHandled(
            notifications=len(handled),
            brokers=brokers,
            replicas=len(on_brokers),
            controller_epoch=ctx.epoch,
        ),
    )
