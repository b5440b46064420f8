"""Broker failure: kill -9 a broker that leads a third of the partitions, then time the
controller from detecting it to every leadership moved.

Runbook, on a running, settled stage (`bench.control.stage`) whose floors were measured:

1. Preferred election of every partition, so that each broker leads its third again.
2. kill -9 the non-controller broker leading the most partitions (flame graphs of the
   survivors meanwhile).
3. Detection is the controller's `broker_change` naming it dead (one session timeout
   after the kill); the change is done when the controller has taken the dead broker's
   replicas offline (its last step) and every live broker accepted the last control
   request it caused (`bench.control.applied`).
4. Check that the dead broker leads nothing; restart it and let the cluster settle.

Floor: fenced multi writes of as many state znodes as the controller wrote (leaders
elected, ISRs shrunk) plus a gRPC round trip of a request naming every partition.
Main thread.
"""

from __future__ import annotations

from bench.control.applied import applied_window
from bench.control.floor import Floors
from bench.control.layout import ClusterLayout
from bench.control.stage import Stage
from bench.shared import console
from bench.shared.profiling import profile_lines
from bench.shared.report import Measure
from eventlog import EventKind

MEASURE = "broker_failure"
#: The replica state a dead broker's replicas reach, as `replica_state_change` names it.
OFFLINE_REPLICA = "OfflineReplica"


def busiest_follower(stage: Stage, controller: int) -> tuple[int, int]:
    """The broker other than `controller` leading the most partitions, and how many."""
    leaders = list(stage.leaders().values())
    counts = {b: leaders.count(b) for b in stage.fleet.broker_ids if b != controller}
    victim = max(counts, key=lambda b: counts[b])
    return victim, counts[victim]


def measure(stage: Stage, layout: ClusterLayout, floors: Floors) -> tuple[list[Measure], list[str]]:
    """One broker failure (see the module docstring): its row and notes."""
    stage.preferred_election()
    controller = stage.controller_id()
    victim, led = busiest_follower(stage, controller)
    survivors = [b for b in stage.fleet.broker_ids if b != victim]
    console.phase(f"{stage.name}: kill -9 broker {victim} (leads {led:,} partitions)")
    with stage.profiled("broker-failure", survivors) as profiles:
        tally = stage.watch_requests(controller, survivors)
        events = stage.fleet.event_tail(controller)
        stage.fleet.kill(victim)
        change = stage.fleet.wait_event(
            controller, EventKind.BROKER_CHANGE, stage.after_session_s, events, dead=victim
        )
        # the handling ends with the dead broker's replicas going offline; the controller
        # may write no event for seconds before that, so quiet logs alone do not say so.
        # The same tail: at 1,000 partitions that event may follow within a poll interval.
        stage.fleet.wait_event(
            controller,
            EventKind.REPLICA_STATE_CHANGE,
            stage.timeout_s,
            events,
            broker_id=victim,
            target=OFFLINE_REPLICA,
        )
        bound = stage.wait_answered(tally)
    window = applied_window(stage.logs(), controller, None, int(change["ts"]), bound)
    still_led = sum(1 for leader in stage.leaders().values() if leader == victim)
    console.detail(
        f"detected -> every leadership moved: {window.seconds} s "
        f"({window.leaders_elected:,} leaders elected, {window.isr_shrinks:,} ISRs shrunk; "
        f"{still_led} partitions still led by broker {victim})"
    )
    stage.restart(victim)
    row = change_measure(
        MEASURE,
        f"broker failure, {layout.partitions:,} partitions",
        layout.partitions,
        window.seconds if window.seconds is not None else float("nan"),
        floors,
        window.states_written,
        note=f"{led:,} leaderships moved after detection",
        extra={"leaders_before": led, "still_led_after": still_led},
    )
    return [row], list(profile_lines(profiles))


def change_measure(
    name: str,
    label: str,
    partitions: int,
    figure: float,
    floors: Floors,
    states: int,
    note: str,
    extra: dict[str, object],
) -> Measure:
    """The row of a change that wrote `states` state znodes (no reload): its floor is
    their fenced multi writes plus one gRPC round trip of every partition."""
    return Measure(
        name,
        label,
        partitions,
        figure,
        floors.of(reload=False, states=states),
        floors.phrase(reload=False, states=states),
        note=note,
        extra={
            **extra,
            "states_written": states,
            "write_floor_seconds": round(floors.write_of(states), 6),
            "rpc_floor_seconds": round(floors.rpc_s, 6),
        },
    )
