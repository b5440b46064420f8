"""The catalog of historical bug switches: name, Kafka JIRAs, where the mechanism lives
and what it does. Pure data; any thread.

A switch's name is what `--bug-switches` / `BUG_SWITCHES` takes. Code that re-creates a
bug asks `BugSwitches.on(<NAME constant>)`; the constants below are the only spelling.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

UNFENCED_ZK_WRITES = "kafka-6082"
STALE_CONTROLLER_EPOCH = "kafka-1188"
NO_BROKER_EPOCH = "kip-380"
EMPTY_ISR = "kafka-5083"
UNCLEAN_ELECTION = "unclean-election"
STALE_ISR_CACHE = "kafka-2729"
STUCK_BATCH = "kafka-2300"
ENQUEUE_TIME_BROKERS = "kafka-3085"
NO_TRUNCATION = "kip-101"
ZOMBIE_CONTROLLER = "kafka-5310"
SENDER_DROPS = "sender-drops"
NO_RESUME = "kafka-1681"
OWN_ZNODE_NO_FAILOVER = "kafka-13407"
NO_RESIGN_ON_DATA_CHANGE = "kafka-2437"
NO_METADATA_FOR_EMPTY_BROKER = "kafka-13225"
LEADER_AND_ISR_FIRST = "kafka-4443"
ONE_ROUND_TRUNCATION = "kafka-6361"
EARLY_ISR_JOIN = "kafka-7128"
STALE_REASSIGNED_EPOCH = "kafka-9212"
NO_ISR_METADATA = "kafka-1367"
IDS_ONLY_BROKER_CHANGE = "kafka-1120"
NEWER_BROKER_EPOCH_REJECTED = "kafka-9839"
REGISTRATION_GIVES_UP = "kafka-7165"
STALE_TERM_STATE = "kafka-4229"


class Side(Enum):
    """Which part of a broker process carries the mechanism."""

    CONTROLLER = "controller"
    BROKER = "broker"


@dataclass(frozen=True, slots=True)
class Bug:
    """One switch: its name, the Kafka JIRAs (or findings) it comes from, and a line on
    the mechanism it re-introduces."""

    name: str
    jiras: tuple[str, ...]
    side: Side
    mechanism: str


CATALOG: tuple[Bug, ...] = (
    Bug(
        UNFENCED_ZK_WRITES,
        ("KAFKA-6082",),
        Side.CONTROLLER,
        "controller ZooKeeper writes skip the /controller_epoch version check, so a "
        "zombie controller overwrites partition state",
    ),
    Bug(
        STALE_CONTROLLER_EPOCH,
        ("KAFKA-1188", "KAFKA-4443"),
        Side.BROKER,
        "brokers obey LeaderAndIsr, StopReplica and UpdateMetadata from an older controller epoch",
    ),
    Bug(
        NO_BROKER_EPOCH,
        ("KIP-380", "KAFKA-5845"),
        Side.BROKER,
        "no broker epoch: a fast bounce is not detected and requests meant for the "
        "previous incarnation are obeyed by the new one",
    ),
    Bug(
        EMPTY_ISR,
        ("KAFKA-5083",),
        Side.CONTROLLER,
        "the ISR is emptied when its last member dies instead of keeping that member",
    ),
    Bug(
        UNCLEAN_ELECTION,
        ("Jepsen 2013",),
        Side.CONTROLLER,
        "unclean leader election: an out-of-sync replica may become leader and "
        "acknowledged writes are lost",
    ),
    Bug(
        STALE_ISR_CACHE,
        ("KAFKA-2729",),
        Side.BROKER,
        "a leader whose conditional ISR write fails never re-reads the partition state "
        "and keeps a stale ISR and zkVersion",
    ),
    Bug(
        STUCK_BATCH,
        ("KAFKA-2300",),
        Side.CONTROLLER,
        "an exception while sending leaves the request batch non-empty and every later "
        "state change of the controller fails",
    ),
    Bug(
        ENQUEUE_TIME_BROKERS,
        ("KAFKA-3085", "KAFKA-5502"),
        Side.CONTROLLER,
        "broker changes are decided on the broker list read when the watch fired, not "
        "when the event is processed",
    ),
    Bug(
        NO_TRUNCATION,
        ("KIP-101",),
        Side.BROKER,
        "a returning leader or follower does not truncate its divergent tail by leader "
        "epoch, so replicas diverge",
    ),
    Bug(
        ZOMBIE_CONTROLLER,
        ("KAFKA-1096", "KAFKA-5310"),
        Side.CONTROLLER,
        "a resigned controller keeps its context and goes on sending requests",
    ),
    Bug(
        SENDER_DROPS,
        ("controller channel",),
        Side.CONTROLLER,
        "the channel sender drops a request that failed instead of resending it",
    ),
    Bug(
        NO_RESUME,
        ("KAFKA-1681", "KAFKA-5310"),
        Side.CONTROLLER,
        "a new controller does not resume pending topic deletions or reassignments",
    ),
    Bug(
        OWN_ZNODE_NO_FAILOVER,
        ("KAFKA-13407",),
        Side.CONTROLLER,
        "a controller whose ZooKeeper connection was lost and regained resigns, re-runs "
        "the election, finds /controller naming itself and stops there: no controller runs",
    ),
    Bug(
        NO_RESIGN_ON_DATA_CHANGE,
        ("KAFKA-2437",),
        Side.CONTROLLER,
        "a controller that finds /controller naming another broker after a change (not a "
        "deletion) does not resign and goes on acting beside its successor",
    ),
    Bug(
        NO_METADATA_FOR_EMPTY_BROKER,
        ("KAFKA-13225",),
        Side.CONTROLLER,
        "when a broker hosting no replica dies while some partition has no live leader, "
        "no UpdateMetadata tells the other brokers it is gone",
    ),
    Bug(
        LEADER_AND_ISR_FIRST,
        ("KAFKA-4443",),
        Side.CONTROLLER,
        "a new controller sends LeaderAndIsr before UpdateMetadata and a follower looks its "
        "leader up in its metadata cache: a broker with an empty cache does not fetch",
    ),
    Bug(
        ONE_ROUND_TRUNCATION,
        ("KAFKA-6361", "KIP-279"),
        Side.BROKER,
        "a follower truncates to the end offset the leader names for the follower's "
        "latest epoch, without checking where that epoch ends in its own log, so after "
        "two quick leader changes the logs diverge",
    ),
    Bug(
        EARLY_ISR_JOIN,
        ("KAFKA-7128", "KIP-320"),
        Side.BROKER,
        "a follower rejoins the ISR once it reaches the high watermark, before it reaches "
        "the start offset of the leader's epoch",
    ),
    Bug(
        STALE_REASSIGNED_EPOCH,
        ("KAFKA-9212",),
        Side.CONTROLLER,
        "the leader epochs a reassignment bumps are written to ZooKeeper but not to the "
        "controller's context, so its UpdateMetadata carries stale leader epochs",
    ),
    Bug(
        NO_ISR_METADATA,
        ("KAFKA-1367",),
        Side.CONTROLLER,
        "an ISR change notification updates the controller's context but sends no "
        "UpdateMetadata, so brokers' metadata keeps the old ISR",
    ),
    Bug(
        IDS_ONLY_BROKER_CHANGE,
        ("KAFKA-1120", "KAFKA-5845"),
        Side.CONTROLLER,
        "broker changes compare broker ids only: a broker that bounced between two "
        "notifications keeps its place and is never sent the state its new process needs",
    ),
    Bug(
        NEWER_BROKER_EPOCH_REJECTED,
        ("KAFKA-9839",),
        Side.BROKER,
        "a broker rejects control requests addressed to a broker epoch newer than the one "
        "it cached, so after re-registering it refuses the controller until it catches up",
    ),
    Bug(
        REGISTRATION_GIVES_UP,
        ("KAFKA-7165", "KAFKA-1387"),
        Side.BROKER,
        "a broker whose re-registration after a session expiry meets an existing "
        "/brokers/ids/N gives up without checking its owner, and stays unregistered",
    ),
    Bug(
        STALE_TERM_STATE,
        ("KAFKA-4229",),
        Side.CONTROLLER,
        "a controller whose session expired keeps its term's state, so its next failover "
        "fails and it holds /controller without acting as controller",
    ),
)

_BY_NAME = {bug.name: bug for bug in CATALOG}


def bug_named(name: str) -> Bug:
    """The catalog entry of `name`; KeyError if there is none."""
    return _BY_NAME[name]
