"""The failover benchmark's measured rounds: the first election over a settled cluster,
then one failover per kill -9 of the controller.

Round 1: hold `/controller` from a bench session (as "broker 0"), start the brokers, and
once all are registered, close that session; wait for the first
`controller_failover_done`. Without the hold, the first broker up would win alone, lead
every partition and shrink every ISR to itself until the others caught up again, so the
round would measure ISR churn rather than a failover over a settled cluster.
Rounds 2..R: SIGKILL the controller, wait for the next `controller_failover_done` with a
larger controller epoch, then restart the killed broker and let the cluster settle.
Every wait has a deadline. Main thread.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from bench.control.timeline import FailoverTimeline, failover_timeline
from bench.shared import console
from bench.shared.fleet import BrokerFleet, FailoverDone
from harness.zk_endpoint import ZkEndpoint
from zkdata.client import KafkaZkClient

FIRST_ELECTION = "first_election"
AFTER_KILL = "after_kill"
#: The broker id the bench registers as controller while the brokers start.
PLACEHOLDER_ID = 0
#: How long the event logs must stay unchanged before the cluster counts as settled.
QUIET_S = 1.5


@dataclass(frozen=True, slots=True)
class RoundResult:
    """One measured failover."""

    number: int
    kind: str
    controller_id: int
    controller_epoch: int
    duration_s: float
    timeline: FailoverTimeline
    killed_broker: int | None = None
    kill_to_elected_s: float | None = None
    kill_to_done_s: float | None = None
    release_to_done_s: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain values for JSON."""
        return {
            "round": self.number,
            "kind": self.kind,
            "controller_id": self.controller_id,
            "controller_epoch": self.controller_epoch,
            "failover_s": self.duration_s,
            "killed_broker": self.killed_broker,
            "kill_to_elected_s": self.kill_to_elected_s,
            "kill_to_done_s": self.kill_to_done_s,
            "controller_released_to_done_s": self.release_to_done_s,
            **self.timeline.as_dict(),
        }


@dataclass(frozen=True, slots=True)
class RoundPlan:
    """What the rounds need to know: how many, and the deadlines."""

    rounds: int
    session_timeout_ms: int
    timeout_s: float

    @property
    def after_session_s(self) -> float:
        """A deadline that also covers a dead broker's session expiring."""
        return self.timeout_s + self.session_timeout_ms / 1000


def run_rounds(plan: RoundPlan, fleet: BrokerFleet, endpoint: ZkEndpoint) -> list[RoundResult]:
    """Every round (see the module docstring); the brokers are running afterwards."""
    console.phase(
        f"round 1: starting {len(fleet.broker_ids)} brokers (session timeout "
        f"{plan.session_timeout_ms} ms) while the bench holds /controller; "
        f"logs in {fleet.run_dir / 'logs'}"
    )
    with endpoint.open() as holder:
        held = KafkaZkClient(holder).register_controller_and_increment_epoch(PLACEHOLDER_ID)
        fleet.start_all()
        fleet.wait_registered(fleet.broker_ids, timeout=plan.timeout_s)
        console.detail("every broker registered; releasing /controller")
    released_at = time.time()  # closing the session deleted the ephemeral /controller
    done = fleet.wait_failover_done(after_epoch=held.epoch, timeout=plan.timeout_s)
    first = round_result(1, FIRST_ELECTION, fleet, done)
    first = replace(first, release_to_done_s=done.ts_ms / 1000 - released_at)
    say_round(first)
    rounds = [first]
    _settle(plan, fleet, fleet.broker_ids)
    for number in range(2, plan.rounds + 1):
        previous = rounds[-1]
        victim = _current_controller(endpoint)
        if victim != previous.controller_id:
            console.warn(
                f"the controller is broker {victim}, not {previous.controller_id} as last seen"
            )
        console.phase(f"round {number}: kill -9 the controller, broker {victim}")
        killed_at = fleet.kill(victim)
        done = fleet.wait_failover_done(
            after_epoch=previous.controller_epoch, timeout=plan.after_session_s
        )
        result = round_result(number, AFTER_KILL, fleet, done)
        elected_ts = result.timeline.elected_ts
        result = replace(
            result,
            killed_broker=victim,
            kill_to_done_s=done.ts_ms / 1000 - killed_at,
            kill_to_elected_s=None if elected_ts is None else elected_ts / 1000 - killed_at,
        )
        say_round(result)
        rounds.append(result)
        if number < plan.rounds:
            console.phase(f"restarting broker {victim}")
            fleet.start(victim)
            _settle(plan, fleet, [victim])
    return rounds


def round_result(number: int, kind: str, fleet: BrokerFleet, done: FailoverDone) -> RoundResult:
    logs = {broker_id: fleet.event_log(broker_id) for broker_id in fleet.broker_ids}
    return RoundResult(
        number=number,
        kind=kind,
        controller_id=done.broker_id,
        controller_epoch=done.controller_epoch,
        duration_s=done.duration_ms / 1000,
        timeline=failover_timeline(logs, done),
    )


def say_round(result: RoundResult) -> None:
    """Progress lines for one round: the figures, the milestones, anything suspicious."""
    t = result.timeline
    console.detail(
        f"broker {result.controller_id} is controller (epoch {result.controller_epoch}), "
        f"failover {result.duration_s:.2f} s: {t.partitions:,} partitions, "
        f"{t.live_brokers} live brokers, {t.leaders_elected:,} leaders elected"
    )
    previous = 0.0
    for milestone in t.milestones:
        console.detail(
            f"  {milestone.offset_s:6.2f} s (+{milestone.offset_s - previous:.2f})  "
            f"{milestone.what}"
        )
        previous = milestone.offset_s
    if t.fenced_on_brokers:
        counts = ", ".join(f"broker {b}: {n:,}" for b, n in sorted(t.fenced_on_brokers.items()))
        console.detail(f"partition_fenced events written meanwhile: {counts}")
    if result.kill_to_done_s is not None:
        detected = (
            f"kill -> elected {result.kill_to_elected_s:.2f} s, "
            if result.kill_to_elected_s is not None
            else ""
        )
        console.detail(f"{detected}kill -> failover done {result.kill_to_done_s:.2f} s")
    if result.release_to_done_s is not None:
        console.detail(f"/controller released -> failover done {result.release_to_done_s:.2f} s")
    if t.offline_partitions:
        console.warn(
            f"round {result.number}: {t.offline_partitions:,} partitions still offline "
            "when the failover finished"
        )


def _settle(plan: RoundPlan, fleet: BrokerFleet, broker_ids: list[int]) -> None:
    """Wait for `broker_ids` to register and for every event log to go quiet."""
    fleet.wait_registered(broker_ids, timeout=plan.after_session_s)
    took = fleet.wait_quiet(QUIET_S, timeout=plan.timeout_s)
    console.detail(f"brokers {broker_ids} registered; cluster quiet after {took:.1f} s")


def _current_controller(endpoint: ZkEndpoint) -> int:
    with endpoint.open() as zk:
        controller = KafkaZkClient(zk).get_controller_id()
    if controller is None:
        raise RuntimeError("no broker holds /controller before the kill")
    return controller
