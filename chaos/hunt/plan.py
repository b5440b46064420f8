"""Which scenarios hunt each historical bug switch (`bugs.CATALOG`), and which invariants
are expected to catch it: the plan behind `python -m chaos bugs` (docs/bugs.md, "What
catches each bug").

The mapping lives here, on the chaos side, and nowhere else: the invariants read only
event logs, histories and snapshots and never know which switch a broker runs with. A
bug no scenario catches is answered by a sharper scenario or invariant, never by a check
that knows the switch.

`attempts(plan, runs)` orders the runs of one hunt: seed 1 of every scenario of the plan,
then seed 2 of each, and so on, `runs` runs in all. Pure values; any thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bugs import CATALOG
from bugs.catalog import (
    EARLY_ISR_JOIN,
    EMPTY_ISR,
    ENQUEUE_TIME_BROKERS,
    IDS_ONLY_BROKER_CHANGE,
    LEADER_AND_ISR_FIRST,
    NEWER_BROKER_EPOCH_REJECTED,
    NO_BROKER_EPOCH,
    NO_ISR_METADATA,
    NO_METADATA_FOR_EMPTY_BROKER,
    NO_RESIGN_ON_DATA_CHANGE,
    NO_RESUME,
    NO_TRUNCATION,
    ONE_ROUND_TRUNCATION,
    OWN_ZNODE_NO_FAILOVER,
    REGISTRATION_GIVES_UP,
    SENDER_DROPS,
    STALE_CONTROLLER_EPOCH,
    STALE_ISR_CACHE,
    STALE_REASSIGNED_EPOCH,
    STALE_TERM_STATE,
    STUCK_BATCH,
    UNCLEAN_ELECTION,
    UNFENCED_ZK_WRITES,
    ZOMBIE_CONTROLLER,
)
from chaos.generator.scenarios import SCENARIOS, Scenario
from rundir.invariants.names import (
    ACKNOWLEDGED_KEPT,
    ACKNOWLEDGED_WRITES,
    BROKER_EPOCH_FENCING,
    CONTROLLER_EPOCH_FENCING,
    CONTROLLER_WRITES_FENCED,
    CONVERGES_AFTER_HEAL,
    DEAD_BROKER_FORGOTTEN,
    EVERY_RUN,
    ISR_JOIN_AFTER_EPOCH_START,
    LOG_MATCHING,
    ONE_LEADER_PER_LEADER_EPOCH,
    PAUSED_CONTROLLER_RESIGNS,
    REASSIGNMENT_COMPLETES,
    REGISTRATION_SERVED,
    REREGISTRATION_COMPLETES,
    RESIGNED_CONTROLLER_SILENT,
    TOPIC_DELETION_COMPLETES,
)

__all__ = ["DEFAULT_RUNS", "PLANS", "BugPlan", "attempts", "plans_for"]

#: The most buggy-build runs a hunt spends on one bug.
DEFAULT_RUNS = 5


@dataclass(frozen=True, slots=True)
class BugPlan:
    """How to hunt `bug`: its `scenarios` (tried in this order, seed by seed), the
    invariants expected to fire (`catches`, any one of them is enough; each judged by a
    scenario of the plan or on every run, `EVERY_RUN`), and why."""

    bug: str
    scenarios: tuple[Scenario, ...]
    catches: frozenset[str]
    why: str

    def __post_init__(self) -> None:
        if not self.scenarios:
            raise ValueError(f"{self.bug}: a plan needs at least one scenario")
        judged = frozenset(EVERY_RUN).union(*(s.invariants for s in self.scenarios))
        unjudged = sorted(self.catches - judged)
        if unjudged:
            raise ValueError(f"{self.bug}: no scenario of the plan judges {', '.join(unjudged)}")

    @property
    def scenario_names(self) -> tuple[str, ...]:
        """The scenarios' names, in order."""
        return tuple(s.name for s in self.scenarios)


def _plan(bug: str, scenarios: Sequence[str], catches: Iterable[str], why: str) -> BugPlan:
    return BugPlan(bug, tuple(SCENARIOS[n] for n in scenarios), frozenset(catches), why)


#: One plan per switch of the catalog, in the catalog's order.
PLANS: tuple[BugPlan, ...] = (
    _plan(
        UNFENCED_ZK_WRITES,
        ("moved-controller-election", "moved-controller", "controller-pause"),
        {
            CONTROLLER_WRITES_FENCED,
            ONE_LEADER_PER_LEADER_EPOCH,
            CONVERGES_AFTER_HEAL,
            PAUSED_CONTROLLER_RESIGNS,
        },
        "the superseded controller's partition state writes still land after its "
        "successor was elected",
    ),
    _plan(
        STALE_CONTROLLER_EPOCH,
        ("deposed-controller", "controller-pause"),
        {CONTROLLER_EPOCH_FENCING},
        "brokers obey the requests a deposed controller still held, delivered once it "
        "reaches them again",
    ),
    _plan(
        NO_BROKER_EPOCH,
        ("fast-bounce", "broker-bounce"),
        {BROKER_EPOCH_FENCING, CONVERGES_AFTER_HEAL},
        "a bounced broker obeys requests addressed to its previous incarnation",
    ),
    _plan(
        EMPTY_ISR,
        ("last-replica-standing",),
        {CONVERGES_AFTER_HEAL},
        "with its last ISR member gone the partition has nobody to elect cleanly, even "
        "after every broker is back",
    ),
    _plan(
        UNCLEAN_ELECTION,
        ("last-replica-standing",),
        {ACKNOWLEDGED_WRITES},
        "the out-of-sync replica that comes back first is elected and truncates "
        "acknowledged writes away",
    ),
    _plan(
        STALE_ISR_CACHE,
        ("lost-isr-reply",),
        {CONVERGES_AFTER_HEAL},
        "the leader's ISR never grows back after its conditional write fails",
    ),
    _plan(
        STUCK_BATCH,
        ("controller-zk-reset",),
        {CONVERGES_AFTER_HEAL},
        "a ZooKeeper write that fails in the middle of a state change leaves its round in "
        "the batch, and every later state change of the controller fails",
    ),
    _plan(
        ENQUEUE_TIME_BROKERS,
        ("slow-controller-bounce", "fast-bounce"),
        {REGISTRATION_SERVED, CONVERGES_AFTER_HEAL, BROKER_EPOCH_FENCING},
        "the listing read when the watch fired misses the bounced broker's new "
        "registration, which no later notification announces",
    ),
    _plan(
        NO_TRUNCATION,
        ("broker-failure", "network-partition", "zk-isolation"),
        {ACKNOWLEDGED_WRITES, ACKNOWLEDGED_KEPT},
        "a replica that starts following truncates to its own high watermark: a restarted "
        "or re-pointed follower removes acknowledged records the leader still holds",
    ),
    _plan(
        ZOMBIE_CONTROLLER,
        ("zombie-controller", "controller-pause"),
        {RESIGNED_CONTROLLER_SILENT, CONTROLLER_EPOCH_FENCING, PAUSED_CONTROLLER_RESIGNS},
        "the resigned controller keeps its channels: requests of the epoch it resigned "
        "still reach brokers after its resignation",
    ),
    _plan(
        SENDER_DROPS,
        ("isolated-election", "network-partition"),
        {CONVERGES_AFTER_HEAL},
        "the cut-off broker never gets the LeaderAndIsr of the elections it missed, and "
        "its replicas stay out of the ISRs",
    ),
    _plan(
        NO_RESUME,
        ("stalled-deletion", "stalled-reassignment", "reassignment-under-failover"),
        {REASSIGNMENT_COMPLETES, TOPIC_DELETION_COMPLETES, CONVERGES_AFTER_HEAL},
        "the new controller never resumes the reassignment or the topic deletion in flight",
    ),
    _plan(
        OWN_ZNODE_NO_FAILOVER,
        ("slow-controller-bounce", "controller-zk-reset"),
        {REGISTRATION_SERVED, CONVERGES_AFTER_HEAL},
        "the controller's reconnection ends its term and the election stops at its own "
        "znode: nobody handles the broker failure or bounce that follows",
    ),
    _plan(
        NO_RESIGN_ON_DATA_CHANGE,
        ("moved-while-reconnecting",),
        {PAUSED_CONTROLLER_RESIGNS},
        "the controller that was watching nothing when /controller moved finds another "
        "broker there and never resigns",
    ),
    _plan(
        NO_METADATA_FOR_EMPTY_BROKER,
        ("empty-broker-failure",),
        {DEAD_BROKER_FORGOTTEN},
        "the retired broker, hosting nothing, dies while a partition is offline: no "
        "UpdateMetadata goes out and the live broker goes on listing it",
    ),
    _plan(
        LEADER_AND_ISR_FIRST,
        ("failover-after-bounce",),
        {CONVERGES_AFTER_HEAL},
        "the broker that registered while there was no controller gets LeaderAndIsr before "
        "it knows the leaders and never fetches",
    ),
    _plan(
        ONE_ROUND_TRUNCATION,
        ("skipped-epoch",),
        {LOG_MATCHING},
        "a follower whose latest epoch its new leader never had keeps records at offsets "
        "where the leader holds others of an earlier epoch: the logs differ below the "
        "high watermark",
    ),
    _plan(
        EARLY_ISR_JOIN,
        ("rolling-restart", "moved-controller-election", "broker-bounce"),
        {ISR_JOIN_AFTER_EPOCH_START},
        "an out-of-sync follower at a new leader's lagging high watermark joins the ISR "
        "below the start of the leader's epoch",
    ),
    _plan(
        STALE_REASSIGNED_EPOCH,
        ("reassignment-under-failover", "stalled-reassignment"),
        {CONVERGES_AFTER_HEAL, REASSIGNMENT_COMPLETES},
        "the brokers' metadata keeps the leader epoch from before the reassignment's final "
        "bump when nothing reads the partition's state again",
    ),
    _plan(
        NO_ISR_METADATA,
        ("broker-failure", "broker-bounce"),
        {CONVERGES_AFTER_HEAL},
        "the ISR changes of the failure and the return reach ZooKeeper and the controller "
        "but no broker's metadata",
    ),
    _plan(
        IDS_ONLY_BROKER_CHANGE,
        ("fast-bounce", "slow-controller-bounce"),
        {CONVERGES_AFTER_HEAL, REGISTRATION_SERVED},
        "a broker that bounced while the controller was not looking keeps its id, so the "
        "controller never sends its new process its leaderships and replicas",
    ),
    _plan(
        NEWER_BROKER_EPOCH_REJECTED,
        ("slow-reregistration", "zk-isolation"),
        {BROKER_EPOCH_FENCING, CONVERGES_AFTER_HEAL},
        "the controller addresses the broker's new registration before the broker knows "
        "its epoch, and the broker refuses its LeaderAndIsr as stale",
    ),
    _plan(
        REGISTRATION_GIVES_UP,
        ("lost-registration-reply", "slow-reregistration"),
        {REREGISTRATION_COMPLETES, CONVERGES_AFTER_HEAL},
        "a broker whose re-registration meets the node its own first attempt made gives "
        "up: it goes on without a registration it knows of",
    ),
    _plan(
        STALE_TERM_STATE,
        ("controller-expiries",),
        {CONVERGES_AFTER_HEAL},
        "a broker elected again after its own term ended with its session holds "
        "/controller without acting: nobody elects leaders or sends metadata",
    ),
)

_BY_BUG = {plan.bug: plan for plan in PLANS}


def plans_for(names: Iterable[str] | None) -> tuple[BugPlan, ...]:
    """The plans of `names` (all of them for None or nothing), in the order given;
    `KeyError` naming the switches that have no plan."""
    chosen = [n.strip().lower() for n in names or () if n.strip()]
    if not chosen:
        return PLANS
    unknown = [n for n in chosen if n not in _BY_BUG]
    if unknown:
        known = ", ".join(_BY_BUG)
        raise KeyError(f"no bug switch {', '.join(unknown)}; known: {known}")
    return tuple(_BY_BUG[n] for n in dict.fromkeys(chosen))


def attempts(
    plan: BugPlan, runs: int, seeds: Sequence[int] | None = None
) -> tuple[tuple[Scenario, int], ...]:
    """The runs of a hunt, `runs` in all: each seed (1, 2, ... or `seeds`) with every
    scenario of the plan in turn."""
    if runs < 1:
        raise ValueError(f"a hunt needs at least one run, got {runs}")
    order = list(seeds) if seeds else list(range(1, runs + 1))
    pairs = [(scenario, seed) for seed in order for scenario in plan.scenarios]
    return tuple(pairs[:runs])


def _check_catalog() -> None:
    """Every switch of the catalog has exactly one plan (checked at import)."""
    planned = [plan.bug for plan in PLANS]
    if sorted(planned) != sorted(bug.name for bug in CATALOG):
        raise ValueError(f"the bug plans {planned} do not match the catalog")


_check_catalog()
