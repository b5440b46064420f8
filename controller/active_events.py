"""`dispatch_to_active`: the events only an active controller handles, each handed to the
duty that owns it (`controller.active.ActiveController` and its parts). The controller
(`controller.controller.KafkaController`) hands them over only while it is active; an
event of another kind is not one of these and is dropped. Event thread only.
"""

from __future__ import annotations

from controller import events as ev
from controller.active import ActiveController

__all__ = ["dispatch_to_active"]


def dispatch_to_active(active: ActiveController, event: ev.ControllerEvent) -> None:
    """Handle `event` with `active`'s duty for it (event thread)."""
    match event:
        case ev.BrokerChange():
            active.brokers.process_broker_change(event.listing)
        case ev.BrokerModifications():
            active.brokers.modifications.process(event.broker_id)
        case ev.TopicChange():
            active.topics.process_topic_change()
        case ev.PartitionModifications():
            active.topics.process_partition_modifications(event.topic)
        case ev.TopicConfigChange():
            active.topics.process_topic_config_change(event.topic)
        case ev.IsrChangeNotification():
            active.process_isr_change_notification()
        case ev.LogDirEventNotification():
            active.process_log_dir_event_notification()
        case ev.TopicDeletion():
            active.process_topic_deletion()
        case ev.LeaderAndIsrResponseReceived():
            active.brokers.process_leader_and_isr_response(event)
        case ev.TopicDeletionStopReplicaResponseReceived():
            active.process_stop_replica_response(event)
        case ev.ReplicaLeaderElection():
            active.elections.process_preferred_replica_election_znode()
        case ev.AutoPreferredReplicaLeaderElection():
            active.elections.auto_rebalance()
        case ev.PartitionReassignment():
            active.reassignments.process_request_znode()
        case ev.PartitionReassignmentIsrChange():
            active.reassignments.on_isr_change(event.topic_partition)
        case _:
            pass  # not an event of the active controller's duties
