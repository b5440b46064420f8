"""The runbook scenarios, one module each, behind `make chaos-<name>`: `SCENARIOS` maps
each scenario's name to its `chaos.generator.scenarios.scenario.Scenario`. A scenario's
module docstring is its runbook (Setup, Steps, Verdict); docs/scenarios.md carries them all.

Pure values; any thread.
"""

from __future__ import annotations

from collections.abc import Mapping

from chaos.generator.scenarios import (
    broker_bounce,
    broker_failure,
    cert_rotation,
    clock_skew,
    controlled_shutdown,
    controller_expiries,
    controller_failover,
    controller_pause,
    controller_zk_reset,
    deposed_controller,
    disk_failure,
    disk_full,
    duplicated_requests,
    empty_broker_failure,
    failover_after_bounce,
    fast_bounce,
    isolated_election,
    last_replica_standing,
    lost_isr_reply,
    lost_registration_reply,
    moved_controller,
    moved_controller_election,
    moved_while_reconnecting,
    network_partition,
    power_loss,
    random_faults,
    reassignment_under_failover,
    reordered_requests,
    rolling_restart,
    skipped_epoch,
    slow_controller_bounce,
    slow_disk,
    slow_network,
    slow_reregistration,
    stalled_deletion,
    stalled_reassignment,
    starved_controller,
    zk_deaf_leader,
    zk_isolation,
    zk_leader_loss,
    zk_quorum_loss,
    zombie_controller,
)
from chaos.generator.scenarios.scenario import Scenario

__all__ = ["SCENARIOS", "Scenario"]

SCENARIOS: Mapping[str, Scenario] = {
    module.SCENARIO.name: module.SCENARIO
    for module in (
        broker_failure,
        controller_failover,
        failover_after_bounce,
        controller_pause,
        deposed_controller,
        zombie_controller,
        moved_controller,
        moved_controller_election,
        moved_while_reconnecting,
        zk_isolation,
        controller_expiries,
        network_partition,
        isolated_election,
        lost_isr_reply,
        zk_deaf_leader,
        broker_bounce,
        fast_bounce,
        slow_controller_bounce,
        slow_reregistration,
        lost_registration_reply,
        controlled_shutdown,
        reassignment_under_failover,
        stalled_reassignment,
        stalled_deletion,
        last_replica_standing,
        empty_broker_failure,
        zk_leader_loss,
        zk_quorum_loss,
        controller_zk_reset,
        rolling_restart,
        slow_network,
        starved_controller,
        clock_skew,
        disk_failure,
        slow_disk,
        disk_full,
        power_loss,
        random_faults,
        duplicated_requests,
        reordered_requests,
        skipped_epoch,
        cert_rotation,
    )
}
