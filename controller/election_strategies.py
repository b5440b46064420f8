"""The ways a partition's leader is chosen, as values the state machine is given
(`OfflineElection`, `ReassignElection`, `PreferredElection`, `ControlledShutdownElection`),
and the choice of the pure election of `controller.leader_election` each one runs over the
context's replicas, live brokers and unclean-election settings (`decide_election`).
Reads the context, writes nothing. Event thread only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from controller.context import ControllerContext
from controller.leader_election import (
    ElectionResult,
    controlled_shutdown_election,
    offline_election,
    preferred_election,
    reassign_election,
)
from domain import LeaderAndIsr, TopicPartition


@dataclass(frozen=True, slots=True)
class OfflineElection:
    """Elect among live ISR members; unclean if allowed here or by the topic's config."""

    allow_unclean: bool = False


@dataclass(frozen=True, slots=True)
class ReassignElection:
    """Elect among the reassignment's target replicas."""


@dataclass(frozen=True, slots=True)
class PreferredElection:
    """Elect the preferred (first) replica."""


@dataclass(frozen=True, slots=True)
class ControlledShutdownElection:
    """Elect a live ISR member that is not shutting down."""


ElectionStrategy = (
    OfflineElection | ReassignElection | PreferredElection | ControlledShutdownElection
)


def decide_election(
    ctx: ControllerContext,
    tp: TopicPartition,
    current: LeaderAndIsr,
    strategy: ElectionStrategy,
    unclean_everywhere: bool,
    unclean_default: bool,
) -> ElectionResult:
    """The leader and ISR `strategy` elects for `tp` from its `current` leadership: an
    offline election is unclean when the strategy, the broker (`unclean_everywhere`) or
    the topic's config (`unclean_default` without an override) allows it."""
    assignment = ctx.assignment(tp)
    replicas = assignment.replicas
    online = {r for r in replicas if ctx.is_replica_online(r, tp=tp)}
    match strategy:
        case OfflineElection(allow_unclean):
            unclean = allow_unclean or unclean_everywhere
            unclean = unclean or ctx.unclean_enabled(tp.topic, unclean_default)
            return offline_election(current, replicas, online, unclean)
        case ReassignElection():
            target = tuple(r for r in replicas if r not in assignment.removing_replicas)
            return reassign_election(
                current, target, {r for r in target if ctx.is_replica_online(r, tp=tp)}
            )
        case PreferredElection():
            return preferred_election(current, replicas, online)
        case ControlledShutdownElection():
            return controlled_shutdown_election(
                current,
                replicas,
                {r for r in replicas if ctx.is_replica_online(r, True, tp)},
                ctx.shutting_down_broker_ids(),
            )


def decide_elections(
    ctx: ControllerContext,
    states: Mapping[TopicPartition, LeaderAndIsr],
    strategy: ElectionStrategy,
    unclean_everywhere: bool,
    unclean_default: bool,
) -> dict[TopicPartition, ElectionResult]:
    """`decide_election` for a round of partitions in one pass over their current
    leaderships (`states`): an offline election looks up what many partitions share once
    (a replica list's online members while no log is offline, a topic's unclean setting)."""
    if not isinstance(strategy, OfflineElection) or ctx.any_log_offline():
        return {
            tp: decide_election(ctx, tp, lai, strategy, unclean_everywhere, unclean_default)
            for tp, lai in states.items()
        }
    live = ctx.live_broker_ids()  # where a replica is online, no log being offline
    online_of: dict[tuple[int, ...], frozenset[int]] = {}
    unclean_of: dict[str, bool] = {}
    anywhere = strategy.allow_unclean or unclean_everywhere
    elections = {}
    for tp, lai in states.items():
        replicas = ctx.assignment(tp).replicas
        online = online_of.get(replicas)
        if online is None:
            online = online_of[replicas] = frozenset(r for r in replicas if r in live)
        unclean = anywhere or unclean_of.get(tp.topic)
        if unclean is None:
            unclean = unclean_of[tp.topic] = ctx.unclean_enabled(tp.topic, unclean_default)
        elections[tp] = offline_election(lai, replicas, online, unclean)
    return elections


def strategy_name(strategy: ElectionStrategy) -> str:
    """The name events give `strategy` (`leader_elected.strategy`)."""
    return {
        OfflineElection: "offline",
        ReassignElection: "reassign",
        PreferredElection: "preferred",
        ControlledShutdownElection: "controlled_shutdown",
    }[type(strategy)]
