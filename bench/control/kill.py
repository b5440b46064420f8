"""One measured failover after kill -9 of the controller on a running stage: the kill,
the wait for the next controller's `controller_failover_done` and for every live broker
to answer what it sent, and the row timed from its election until then. Shared by the
failover rows of `bench.control.failover` and `bench.control.spare`. Main thread.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bench.control.applied import AppliedWindow, applied_window
from bench.control.floor import Floors
from bench.control.rounds import AFTER_KILL, RoundResult, round_result, say_round
from bench.control.stage import Stage
from bench.shared import console
from bench.shared.profiling import Profiles, rate_for
from bench.shared.report import Measure


@dataclass(frozen=True, slots=True)
class Killed:
    """The failover that followed a kill: its round, its applied window and the flame
    graphs taken meanwhile (None when not profiling)."""

    result: RoundResult
    window: AppliedWindow
    profiles: Profiles | None


def kill_controller(
    stage: Stage, previous: RoundResult, n: int, what: str, profile_name: str = "failover"
) -> Killed:
    """SIGKILL `previous`'s controller and measure the failover that follows."""
    victim = previous.controller_id
    survivors = [b for b in stage.fleet.broker_ids if b != victim]
    console.phase(f"{stage.name}: kill -9 the controller, broker {victim}{what}")
    with stage.profiled(profile_name, survivors, rate_for(n)) as profiles:
        tallies = [stage.watch_requests(b, survivors) for b in survivors]  # the next's
        killed_at = stage.fleet.kill(victim)
        done = stage.fleet.wait_failover_done(previous.controller_epoch, stage.after_session_s)
        tally = tallies[survivors.index(done.broker_id)]
        bound = stage.wait_answered(tally)
    after = round_result(previous.number + 1, AFTER_KILL, stage.fleet, done)
    after = replace(after, killed_broker=victim, kill_to_done_s=done.ts_ms / 1000 - killed_at)
    say_round(after)
    start = after.timeline.elected_ts
    if start is None:
        raise RuntimeError(f"round {after.number}: no controller_elected event")
    window = applied_window(stage.logs(), after.controller_id, after.controller_epoch, start, bound)
    return Killed(after, window, profiles)


def failover_row(name: str, label: str, n: int, killed: Killed, floors: Floors) -> Measure:
    """The row of one failover against the reload + write + round-trip floor."""
    window, result = killed.window, killed.result
    states = window.states_written
    figure = window.seconds if window.seconds is not None else float("nan")
    return Measure(
        name,
        f"{label}, {n:,} partitions",
        n,
        figure,
        floors.of(reload=True, states=states),
        floors.phrase(reload=True, states=states),
        note=(
            f"{window.leaders_elected:,} leaders moved; "
            f"controller's own part {result.duration_s:.2f} s"
        ),
        extra={
            "controller_seconds": round(result.duration_s, 6),
            "controller_id": result.controller_id,
            "loading_seconds": result.timeline.load_s,
            "states_written": states,
            "requests_accepted": window.requests_accepted,
            "read_floor_seconds": round(floors.read.seconds, 6),
            "write_floor_seconds": round(floors.write_of(states), 6),
            "rpc_floor_seconds": round(floors.rpc_s, 6),
            "kill_to_done_seconds": result.kill_to_done_s,
        },
    )
