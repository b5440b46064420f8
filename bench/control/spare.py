"""The failover after kill -9 with a new controller that hosts no replicas: what taking
the controller out of its broker's data plane could give at most.

Runbook, on a stage of its own with one broker more than the cluster's (`spare`):

1. Populate the chroot with the same cluster as the failover row of this size (replicas
   on brokers 1..N only; the spare is in no assignment).
2. While the bench holds `/controller` (as `bench.control.rounds` does), start broker 1
   and brokers 2..N with `--controller-candidate false`; release it once all are
   registered: broker 1, the only candidate, is the first controller, over a settled
   cluster with every first replica leading.
3. Start the spare, a candidate hosting nothing, and let the cluster settle.
4. kill -9 broker 1 (`bench.control.kill`): the spare is the only candidate left and
   takes over; the row is timed from its election until every live broker accepted the
   last request it caused, against the floors measured for the failover row of the
   same size. The new controller's process then runs no fetcher, serves no Fetch and
   applies no LeaderAndIsr; everything else is as in that row.

One run per size (the median of several would need the controller moved back to broker
1 between runs). Main thread.
"""

from __future__ import annotations

from bench.control.floor import Floors
from bench.control.kill import failover_row, kill_controller
from bench.control.layout import ClusterLayout, znodes
from bench.control.populate import populate
from bench.control.rounds import FIRST_ELECTION, PLACEHOLDER_ID, round_result, say_round
from bench.control.stage import Stage
from bench.shared import console
from bench.shared.profiling import profile_lines
from bench.shared.report import Measure
from zkdata.client import KafkaZkClient

NOT_A_CANDIDATE = ("--controller-candidate", "false")


def spare_id(layout: ClusterLayout) -> int:
    """The spare broker's id: one above the cluster's."""
    return layout.brokers + 1


def measure(stage: Stage, layout: ClusterLayout, floors: Floors) -> tuple[Measure, list[str]]:
    """The runbook above on `stage`, whose fleet is brokers 1..N and the spare; the row
    and the flame-graph notes."""
    n = layout.partitions
    spare = spare_id(layout)
    if stage.fleet.broker_ids != [*layout.broker_ids, spare]:
        raise ValueError(f"{stage.name}: the fleet must be brokers 1..{spare}")
    console.phase(f"{stage.name}: populating {layout.znode_count():,} znodes")
    with stage.endpoint.open() as zk:
        populate(zk, znodes(layout), layout.znode_count())
    console.phase(
        f"{stage.name}: broker 1 the only candidate, brokers 2..{layout.brokers} "
        f"not; then broker {spare}, hosting no replicas"
    )
    with stage.endpoint.open() as holder:
        held = KafkaZkClient(holder).register_controller_and_increment_epoch(PLACEHOLDER_ID)
        for broker_id in layout.broker_ids:
            stage.fleet.start(broker_id, *(() if broker_id == 1 else NOT_A_CANDIDATE))
        stage.fleet.wait_registered(layout.broker_ids, timeout=stage.after_session_s)
    done = stage.fleet.wait_failover_done(after_epoch=held.epoch, timeout=stage.timeout_s)
    first = round_result(1, FIRST_ELECTION, stage.fleet, done)
    say_round(first)
    stage.fleet.start(spare)
    stage.settle(stage.fleet.broker_ids)
    killed = kill_controller(stage, first, n, f"; broker {spare} takes over")
    if killed.result.controller_id != spare:
        raise RuntimeError(
            f"{stage.name}: broker {killed.result.controller_id} took over, not {spare}"
        )
    row = failover_row(
        "controller_failover_spare",
        "failover, new controller hosting no replicas",
        n,
        killed,
        floors,
    )
    return row, list(profile_lines(killed.profiles))
