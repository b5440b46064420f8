"""`decide_elections`: a round's elections decided in one pass give every partition what
`decide_election` gives it alone, whatever the brokers, logs and topic configs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.context import ControllerContext
from controller.election_strategies import (
    ControlledShutdownElection,
    ElectionStrategy,
    OfflineElection,
    PreferredElection,
    ReassignElection,
    decide_election,
    decide_elections,
)
from controller.testing.brokers import make_broker
from domain import NO_LEADER, LeaderAndIsr, TopicPartition
from zkdata.model import ReplicaAssignment

BROKERS = st.integers(min_value=1, max_value=5)
REPLICAS = st.lists(BROKERS, min_size=1, max_size=3, unique=True).map(tuple)
LEADERSHIPS = st.builds(
    LeaderAndIsr,
    st.sampled_from((NO_LEADER, 1, 2, 3)),
    st.integers(min_value=0, max_value=9),
    st.lists(BROKERS, max_size=3, unique=True).map(tuple),
)
STRATEGIES: st.SearchStrategy[ElectionStrategy] = st.sampled_from(
    (
        OfflineElection(),
        OfflineElection(allow_unclean=True),
        ReassignElection(),
        PreferredElection(),
        ControlledShutdownElection(),
    )
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("ab"), REPLICAS, LEADERSHIPS), max_size=8),
    st.frozensets(BROKERS),
    st.frozensets(BROKERS),
    st.sets(st.integers(min_value=0, max_value=7)),
    st.sampled_from(({}, {"a": "true"}, {"b": "false"})),
    STRATEGIES,
    st.booleans(),
    st.booleans(),
)
def test_one_pass_decides_as_each_partition_alone(
    partitions: list[tuple[str, tuple[int, ...], LeaderAndIsr]],
    live: frozenset[int],
    shutting_down: frozenset[int],
    offline_logs: set[int],
    configs: dict[str, str],
    strategy: ElectionStrategy,
    unclean_everywhere: bool,
    unclean_default: bool,
) -> None:
    ctx = ControllerContext()
    ctx.set_live_brokers(make_broker(b) for b in live)
    for b in shutting_down & live:
        ctx.mark_shutting_down(b)
    states = {}
    for topic in "ab":
        assigned = {p: ReplicaAssignment(r) for p, (t, r, _) in enumerate(partitions) if t == topic}
        ctx.add_topic(topic, assigned)
        if topic in configs:
            ctx.set_topic_config(topic, {"unclean.leader.election.enable": configs[topic]})
    for p, (topic, _, lai) in enumerate(partitions):
        states[TopicPartition(topic, p)] = lai
    for p in offline_logs:
        for topic in "ab":
            ctx.mark_replicas_offline(1 + p % 5, [TopicPartition(topic, p)])
    decided = decide_elections(ctx, states, strategy, unclean_everywhere, unclean_default)
    assert decided == {
        tp: decide_election(ctx, tp, lai, strategy, unclean_everywhere, unclean_default)
        for tp, lai in states.items()
    }
