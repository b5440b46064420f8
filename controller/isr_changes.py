"""The controller's side of ISR change notifications (Kafka's IsrChangeNotification
event): partition leaders record ISR changes under `/isr_change_notification`; the active
controller reloads those partitions' states, tells every live broker, and deletes the
notifications it handled. Bug switch `kafka-1367` leaves the brokers untold: their metadata
keeps the ISR of the last LeaderAndIsr or UpdateMetadata. Event thread only."""

from __future__ import annotations

from controller import events as ev
from controller.context import ControllerContext
from controller.request_batch import SendUpdateMetadata
from controller.watchers import Watchers
from eventlog import EventLog, IsrChangeHandled, MalformedZnode
from zkdata.client import KafkaZkClient
from zkdata.isr_change_notifications import (
    delete_isr_change_notifications,
    read_isr_change_notifications,
)


def process_isr_change_notification(
    ctx: ControllerContext,
    zk: KafkaZkClient,
    watchers: Watchers,
    event_log: EventLog,
    send_update_metadata: SendUpdateMetadata | None,
) -> None:
    """Re-arm the child watch, reload the notified partitions' states into the context,
    send them to every live broker (not without `send_update_metadata`: bug switch
    `kafka-1367`), and delete the handled (and malformed) notifications, epoch-fenced."""
    notes = read_isr_change_notifications(zk, watchers(ev.IsrChangeNotification()))
    for child, error in notes.malformed.items():
        event_log.emit(MalformedZnode(path=error.path or child, reason=error.reason))
    partitions = sorted({tp for tps in notes.found.values() for tp in tps if ctx.replicas(tp)})
    if partitions:
        states = zk.get_partition_states(partitions)
        for tp, state in states.found.items():
            ctx.set_leadership(tp, state)
        if send_update_metadata is not None:
            send_update_metadata(ctx.live_or_shutting_down_broker_ids(), partitions)
    handled = sorted(set(notes.found) | set(notes.malformed))
    if handled:
        delete_isr_change_notifications(zk, handled, ctx.epoch_zk_version)
        event_log.emit(
            IsrChangeHandled(
                notifications=len(handled), partitions=len(partitions), controller_epoch=ctx.epoch
            ),
        )
