"""`ControllerConfig`: the controller's settings, taken from the broker's configuration
at the edge. A frozen value; any thread."""

from __future__ import annotations

from dataclasses import dataclass

from bugs import NO_BUGS, BugSwitches
from zkdata.state_readers import ReaderSettings


@dataclass(frozen=True, slots=True)
class ControllerConfig:
    """Controller settings taken from the broker's configuration."""

    unclean_leader_election_enable: bool = False
    #: Kafka's `delete.topic.enable`: when false, deletion requests are only removed.
    delete_topic_enable: bool = True
    #: Kafka's `auto.leader.rebalance.enable`, `leader.imbalance.per.broker.percentage`
    #: and `leader.imbalance.check.interval.seconds`.
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_per_broker_percentage: int = 10
    leader_imbalance_check_interval_s: float = 300.0
    #: Historical bugs the controller re-introduces (`bugs/`); none by default.
    bug_switches: BugSwitches = NO_BUGS
    #: Helper processes that read partition states alongside the event thread when the
    #: context of many partitions is loaded (`zkdata.state_readers`); None: no helpers.
    state_readers: ReaderSettings | None = None
    #: Whether the broker runs for controller (Kafka's always do; benchmarks choose).
    candidate: bool = True
