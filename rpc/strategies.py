"""Hypothesis strategies of well-typed but hostile requests, for fuzzing the handlers of
every RPC (tests only; imports hypothesis).

Every value fits its protobuf field (int32, int64, valid UTF-8), so each request encodes;
the values themselves are hostile: ids, epochs and offsets at and around their sentinels
and limits, topic names Kafka refuses (empty, "..", path separators, too long, non-ASCII),
partitions listed twice, leaders outside their replicas. Small ids and epochs dominate, so
that requests often match the broker under test and reach the code that changes state.
Pure; run on the fuzzing test's thread.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from domain import EndPoint, TopicPartition
from rpc import messages as m

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

#: Topic names a broker should serve, and names it must refuse.
LEGAL_TOPICS = ("t", "orders", "a.b_c-1")
HOSTILE_TOPICS = ("", ".", "..", "../x", "../../etc", "a/b", "x" * 250, "é", "a b", "t\x00")

int32 = st.integers(INT32_MIN, INT32_MAX)
int64 = st.integers(INT64_MIN, INT64_MAX)


def near(low: int, high: int, *extremes: int) -> st.SearchStrategy[int]:
    """Mostly values in [low, high], sometimes an extreme or any int32."""
    return st.one_of(
        st.integers(low, high),
        st.integers(low, high),
        st.sampled_from((INT32_MIN, -1, 0, INT32_MAX, *extremes)),
        int32,
    )


broker_ids = near(-2, 4)
epochs = near(-3, 8)
offsets = st.one_of(st.integers(-2, 20), int64)
topics = st.one_of(
    st.sampled_from(LEGAL_TOPICS),
    st.sampled_from(LEGAL_TOPICS),
    st.sampled_from(HOSTILE_TOPICS),
    st.text(max_size=12),
)
partitions = near(-2, 3)
id_lists = st.lists(broker_ids, max_size=5).map(tuple)
timeouts = st.one_of(st.integers(0, 5), st.sampled_from((-1, INT32_MIN, INT32_MAX, 300_001)))
topic_partitions = st.builds(TopicPartition, topics, partitions)


def headers(broker_epoch: st.SearchStrategy[int] = int64) -> st.SearchStrategy[m.ControlHeader]:
    """Control headers with hostile ids and epochs."""
    return st.builds(
        m.ControlHeader,
        controller_id=broker_ids,
        controller_epoch=epochs,
        broker_epoch=st.one_of(near(-2, 102), broker_epoch),
    )


live_leaders = st.lists(
    st.builds(
        m.LiveLeader,
        broker_id=broker_ids,
        host=st.sampled_from(("localhost", "", "x" * 300)),
        port=near(0, 2, 65536),
    ),
    max_size=3,
).map(tuple)
endpoints = st.builds(
    EndPoint,
    host=st.sampled_from(("b1", "", "x" * 300)),
    port=near(0, 2, 65535, 65536),
    listener=st.sampled_from(("PLAINTEXT", "")),
    security_protocol=st.sampled_from(("PLAINTEXT", "")),
)
live_brokers = st.lists(
    st.builds(
        m.LiveBroker,
        id=broker_ids,
        endpoints=st.lists(endpoints, max_size=2).map(tuple),
        rack=st.none() | st.text(min_size=1, max_size=4),  # "" travels as no rack
    ),
    max_size=3,
).map(tuple)

leader_and_isr_states = st.builds(
    m.LeaderAndIsrPartitionState,
    topic=topics,
    partition=partitions,
    controller_epoch=epochs,
    leader=broker_ids,
    leader_epoch=epochs,
    isr=id_lists,
    zk_version=epochs,
    replicas=id_lists,
    adding_replicas=id_lists,
    removing_replicas=id_lists,
    is_new=st.booleans(),
)


def leader_and_isr_requests(
    leaders: st.SearchStrategy[tuple[m.LiveLeader, ...]] = live_leaders,
) -> st.SearchStrategy[m.LeaderAndIsrRequest]:
    """LeaderAndIsr requests (pass `st.just(())` to keep replica fetchers from starting)."""
    return st.builds(
        m.LeaderAndIsrRequest,
        header=headers(),
        partition_states=st.lists(leader_and_isr_states, max_size=5).map(tuple),
        live_leaders=leaders,
    )


update_metadata_requests = st.builds(
    m.UpdateMetadataRequest,
    header=headers(),
    partition_states=st.lists(
        st.builds(
            m.UpdateMetadataPartitionState,
            topic=topics,
            partition=partitions,
            controller_epoch=epochs,
            leader=broker_ids,
            leader_epoch=epochs,
            isr=id_lists,
            zk_version=epochs,
            replicas=id_lists,
            offline_replicas=id_lists,
        ),
        max_size=5,
    ).map(tuple),
    live_brokers=live_brokers,
)
stop_replica_requests = st.builds(
    m.StopReplicaRequest,
    header=headers(),
    partition_states=st.lists(
        st.builds(
            m.StopReplicaPartitionState,
            topic=topics,
            partition=partitions,
            leader_epoch=epochs,
            delete_partition=st.booleans(),
        ),
        max_size=5,
    ).map(tuple),
)
controlled_shutdown_requests = st.builds(
    m.ControlledShutdownRequest, broker_id=broker_ids, broker_epoch=st.one_of(near(-2, 102), int64)
)
elect_leaders_requests = st.builds(
    m.ElectLeadersRequest,
    election_type=near(0, 1, 2),
    partitions=st.lists(topic_partitions, max_size=4).map(tuple),
    timeout_ms=timeouts,
)

partition_records = st.builds(
    m.PartitionRecords,
    topic=topics,
    partition=partitions,
    records=st.lists(
        st.builds(
            m.ProducedRecord,
            key=st.none() | st.binary(max_size=4),
            value=st.binary(max_size=8),
            timestamp_ms=st.one_of(st.integers(-3, 2), int64),
        ),
        max_size=3,
    ).map(tuple),
)
#: Several partitions per request: none, a few, and some named twice.
produce_requests = st.builds(
    m.ProduceRequest,
    partitions=st.one_of(
        st.lists(partition_records, max_size=4).map(tuple),
        st.lists(partition_records, min_size=1, max_size=3).map(lambda ps: (*ps, ps[0])),
    ),
    acks=near(-1, 1, 2, -2),
    timeout_ms=timeouts,
)
fetch_requests = st.builds(
    m.FetchRequest,
    partitions=st.lists(
        st.builds(
            m.FetchPartition,
            topic=topics,
            partition=partitions,
            fetch_offset=offsets,
            current_leader_epoch=epochs,
            max_records=near(-1, 5, 1_000_001),
        ),
        max_size=4,
    ).map(tuple),
    replica_id=broker_ids,
    max_wait_ms=timeouts,
    session_id=near(-1, 2, INT32_MAX),
    session_epoch=near(-2, 2, INT32_MAX),
    forgotten=st.lists(topic_partitions, max_size=2).map(tuple),
)
offsets_for_leader_epoch_requests = st.builds(
    m.OffsetsForLeaderEpochRequest,
    partitions=st.lists(
        st.builds(
            m.EpochPartition,
            topic=topics,
            partition=partitions,
            current_leader_epoch=epochs,
            leader_epoch=epochs,
        ),
        max_size=4,
    ).map(tuple),
    replica_id=broker_ids,
)
metadata_requests = st.builds(m.MetadataRequest, topics=st.lists(topics, max_size=4).map(tuple))


# -- plausible requests: valid but for an epoch or two, so that fuzzing reaches the code
# -- that changes state as often as the code that refuses ---------------------------------

plausible_topics = st.sampled_from(LEGAL_TOPICS)
plausible_partitions = st.integers(0, 2)
plausible_epochs = st.integers(0, 8)


def plausible_headers(broker_epoch: int) -> st.SearchStrategy[m.ControlHeader]:
    """Headers from a controller near epoch 5, addressed to `broker_epoch` or near it."""
    return st.builds(
        m.ControlHeader,
        controller_id=st.integers(0, 3),
        controller_epoch=st.integers(3, 7),
        broker_epoch=st.sampled_from((-1, broker_epoch - 1, broker_epoch, broker_epoch + 1)),
    )


@st.composite
def _plausible_replicas(draw: st.DrawFn) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """(leader, isr, replicas): distinct replicas among brokers 1-3, the leader one of them
    (or -1), the ISR a subset."""
    replicas = tuple(draw(st.permutations([1, 2, 3]))[: draw(st.integers(1, 3))])
    leader = draw(st.sampled_from((*replicas, -1)))
    isr = tuple(r for r in replicas if r == leader or draw(st.booleans()))
    return leader, isr, replicas


@st.composite
def _plausible_states(draw: st.DrawFn, min_size: int) -> list[tuple[Any, ...]]:
    """Fields shared by LeaderAndIsr and UpdateMetadata states, one partition at most once:
    (topic, partition, controller epoch, leader, leader epoch, isr, zkVersion, replicas)."""
    states: dict[tuple[str, int], tuple[Any, ...]] = {}
    for _ in range(draw(st.integers(min_size, 4))):
        leader, isr, replicas = draw(_plausible_replicas())
        tp = (draw(plausible_topics), draw(plausible_partitions))
        epochs = (draw(plausible_epochs), draw(plausible_epochs))
        states[tp] = (*tp, epochs[0], leader, epochs[1], isr, 0, replicas)
    return list(states.values())


@st.composite
def plausible_leader_and_isr_requests(draw: st.DrawFn, broker_epoch: int) -> m.LeaderAndIsrRequest:
    """LeaderAndIsr requests a controller might send (no live leaders, so no replica
    fetcher starts)."""
    states = tuple(m.LeaderAndIsrPartitionState(*f) for f in draw(_plausible_states(1)))
    return m.LeaderAndIsrRequest(draw(plausible_headers(broker_epoch)), states)


@st.composite
def plausible_update_metadata_requests(
    draw: st.DrawFn, broker_epoch: int
) -> m.UpdateMetadataRequest:
    """UpdateMetadata requests a controller might send."""
    states = tuple(m.UpdateMetadataPartitionState(*f) for f in draw(_plausible_states(0)))
    brokers = tuple(
        m.LiveBroker(b, (EndPoint(f"broker{b}", 9092),)) for b in draw(st.sets(st.integers(1, 3)))
    )
    return m.UpdateMetadataRequest(draw(plausible_headers(broker_epoch)), states, brokers)


def plausible_stop_replica_requests(broker_epoch: int) -> st.SearchStrategy[m.StopReplicaRequest]:
    """StopReplica requests a controller might send."""
    return st.builds(
        m.StopReplicaRequest,
        header=plausible_headers(broker_epoch),
        partition_states=st.lists(
            st.builds(
                m.StopReplicaPartitionState,
                topic=plausible_topics,
                partition=plausible_partitions,
                leader_epoch=st.integers(-2, 8),
                delete_partition=st.booleans(),
            ),
            max_size=3,
            unique_by=lambda s: (s.topic, s.partition),
        ).map(tuple),
    )
