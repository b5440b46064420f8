"""The kinds of structured events, schema version 2 (docs/events.md). Any thread."""

from __future__ import annotations

from enum import StrEnum

#: Bumped whenever a kind's fields change incompatibly; written into every line as `v`.
#: Version 2 writes the controller's per-partition facts of a round as one event of
#: columns (`eventlog.events.rounds`).
SCHEMA_VERSION = 2
#: The versions a reader takes: a version 1 log holds the same facts one event each.
READABLE_VERSIONS = frozenset({1, 2})


class EventKind(StrEnum):
    """What happened. Field lists are in docs/events.md."""

    NODE_STARTED = "node_started"
    NODE_STOPPED = "node_stopped"
    BUG_SWITCHES_ON = "bug_switches_on"
    ZK_SESSION_STATE = "zk_session_state"
    BROKER_REGISTERED = "broker_registered"
    CONTROLLER_ELECTED = "controller_elected"
    CONTROLLER_RESIGNED = "controller_resigned"
    CONTROLLER_OBSERVED = "controller_observed"
    REQUEST_ACCEPTED = "request_accepted"
    REQUEST_REJECTED = "request_rejected"
    REQUEST_INVALID = "request_invalid"
    REQUEST_FAILED = "request_failed"
    PARTITION_FENCED = "partition_fenced"
    MALFORMED_ZNODE = "malformed_znode"
    EVENT_FAILED = "event_failed"
    CONTROL_REQUEST_SENT = "control_request_sent"
    CONTROL_RESPONSE_RECEIVED = "control_response_received"
    CONTROL_REQUEST_DROPPED = "control_request_dropped"
    PARTITION_STATE_CHANGE = "partition_state_change"
    REPLICA_STATE_CHANGE = "replica_state_change"
    INVALID_STATE_TRANSITION = "invalid_state_transition"
    LEADER_ELECTED = "leader_elected"
    LEADER_ELECTION_FAILED = "leader_election_failed"
    BROKER_CHANGE = "broker_change"
    BROKER_MODIFIED = "broker_modified"
    TOPIC_CHANGE = "topic_change"
    CONTROLLER_FAILOVER_DONE = "controller_failover_done"
    CONTROLLER_FAILOVER_STEP = "controller_failover_step"
    ISR_SHRINK_FAILED = "isr_shrink_failed"
    ISR_CHANGED = "isr_changed"
    ISR_UPDATE_FAILED = "isr_update_failed"
    LOG_TRUNCATED = "log_truncated"
    ISR_CHANGE_PROPAGATED = "isr_change_propagated"
    ISR_CHANGE_HANDLED = "isr_change_handled"
    ALTER_ISR_HANDLED = "alter_isr_handled"
    FETCHER_PARKED = "fetcher_parked"
    HIGH_WATERMARK_MOVED = "high_watermark_moved"
    CONTROLLED_SHUTDOWN = "controlled_shutdown"
    LEADER_ELECTIONS_REQUESTED = "leader_elections_requested"
    CONTROLLED_SHUTDOWN_ATTEMPT = "controlled_shutdown_attempt"
    TOPIC_DELETION_REQUESTED = "topic_deletion_requested"
    TOPIC_DELETION_STARTED = "topic_deletion_started"
    TOPIC_DELETION_INELIGIBLE = "topic_deletion_ineligible"
    TOPIC_DELETION_COMPLETED = "topic_deletion_completed"
    TOPIC_DELETION_FAILED = "topic_deletion_failed"
    REASSIGNMENT_STARTED = "reassignment_started"
    REASSIGNMENT_REJECTED = "reassignment_rejected"
    REASSIGNMENT_COMPLETED = "reassignment_completed"
    REASSIGNMENT_FAILED = "reassignment_failed"
    TOPIC_CONFIG_CHANGED = "topic_config_changed"
    REPLICAS_OFFLINE = "replicas_offline"
    LOG_UNAVAILABLE = "log_unavailable"
    LOG_DIR_FAILED = "log_dir_failed"
    LOG_DIR_EVENT_HANDLED = "log_dir_event_handled"
    PARTITIONS_ADDED = "partitions_added"
    TLS_HANDSHAKE_REFUSED = "tls_handshake_refused"
    UNAUTHORIZED_REQUEST = "unauthorized_request"
    LEADERS_ELECTED = "leaders_elected"
    LEADER_ELECTIONS_FAILED = "leader_elections_failed"
    ISRS_SHRUNK = "isrs_shrunk"
    ISR_SHRINKS_FAILED = "isr_shrinks_failed"
    LEADERSHIPS_STARTED = "leaderships_started"
