"""Hypothesis strategies of well-typed but hostile requests, for fuzzing the handlers of
every RPC (tests only; imports hypothesis).

Every value fits its protobuf field (int32, int64, valid UTF-8), so each request encodes;
the values themselves are hostile: ids, epochs and offsets at and around their sentinels
and limits, topic names Kafka refuses (empty, "..", path separators, too long, non-ASCII),
partitions listed twice, leaders outside their replicas. Small ids and epochs dominate, so
that requests often match the broker under test and reach the code that changes state.
"""

from __future__ import annotations

from hypothesis import strategies as st

from rpc import messages as m
from zkdata.model import EndPoint, TopicPartition

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
        rack=st.none() | st.text(max_size=4),
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

produce_requests = st.builds(
    m.ProduceRequest,
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
