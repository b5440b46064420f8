"""Topic creation: many topics written at once, timed until every partition is online.

Runbook, on a fresh stage (`bench.control.stage`):

1. Start the brokers on an empty chroot and let them settle.
2. Floors: the best of N multi creates of the same znodes (topic znodes, partition
   parents and states, in transactions of 1,000) into scratch chroots, and the gRPC
   round trip of a LeaderAndIsr naming every new partition.
3. Write every topic znode in multis (as an admin tool would, all at once) and wait until
   every live broker accepted the last control request the controller sent for them
   (flame graphs of every broker meanwhile).
4. Check that every partition has a leader.

Main thread.
"""

from __future__ import annotations

import time

from bench.control.applied import applied_window
from bench.control.floor import rpc_floor
from bench.control.layout import ClusterLayout, znodes
from bench.control.populate import populate
from bench.control.stage import Stage
from bench.shared import console
from bench.shared.cluster_ready import broker_port
from bench.shared.profiling import profile_lines
from bench.shared.report import Measure
from eventlog import EventKind
from harness.zk_endpoint import ZkEndpoint
from harness.zk_ensemble import new_chroot
from zkdata import paths
from zkdata.fenced_writes import MAX_OPS_PER_MULTI
from zkdata.znodes import TopicZNode

MEASURE = "topic_creation"
#: The partition state new partitions reach, as `partition_state_change` names it.
ONLINE_PARTITION = "OnlinePartition"


def _create_floor(root: ZkEndpoint, layout: ClusterLayout, repetitions: int) -> float:
    """Best multi creation of every znode of `layout`, each time in a fresh chroot."""
    best = float("inf")
    for _ in range(repetitions):
        chroot = new_chroot()
        with root.open() as zk:
            zk.ensure_path(chroot)
        with root.within(chroot).open() as zk:
            best = min(best, populate(zk, znodes(layout), layout.znode_count()).seconds)
    return best


def _create_topics(endpoint: ZkEndpoint, layout: ClusterLayout) -> None:
    """Every topic znode of `layout`, in multis of up to 1,000 creates."""
    topics = list(layout.assignments().items())
    with endpoint.open() as zk:
        for i in range(0, len(topics), MAX_OPS_PER_MULTI):
            tx = zk.transaction()
            for topic, assignment in topics[i : i + MAX_OPS_PER_MULTI]:
                tx.create(paths.topic(topic), TopicZNode.encode(assignment))
            failed = [r for r in tx.commit() if isinstance(r, Exception)]
            if failed:
                raise RuntimeError(f"creating topics failed: {failed[0]!r}")


def measure(
    stage: Stage, root: ZkEndpoint, layout: ClusterLayout, repetitions: int
) -> tuple[list[Measure], list[str]]:
    """Create `layout`'s topics on `stage` (see the module docstring): the row and notes."""
    n = layout.partitions
    console.phase(f"{stage.name}: starting {len(stage.fleet.broker_ids)} brokers, no topics")
    stage.start()
    create_s = _create_floor(root, layout, repetitions)
    controller = stage.controller_id()
    rpc_s = rpc_floor(broker_port(stage.fleet, controller), layout, repetitions, stage.tls_dir)
    console.detail(
        f"floors: multi creates of {layout.znode_count():,} znodes {create_s:.2f} s, "
        f"gRPC round trip of a {n:,}-partition request {rpc_s * 1000:.1f} ms"
    )
    console.phase(
        f"{stage.name}: creating {layout.topics:,} topics of {n // layout.topics} partitions"
    )
    with stage.profiled("topic-creation", stage.fleet.broker_ids) as profiles:
        tally = stage.watch_requests(controller, stage.fleet.broker_ids)
        start_ms = int(time.time() * 1000)
        _create_topics(stage.endpoint, layout)
        # every new partition reaches OnlinePartition on the controller first; it may write
        # no event for seconds before, so quiet logs alone do not say the work is done
        stage.fleet.wait_total(
            controller,
            EventKind.PARTITION_STATE_CHANGE,
            "partitions",
            n,
            stage.timeout_s,
            target=ONLINE_PARTITION,
        )
        bound = stage.wait_answered(tally)
    window = applied_window(stage.logs(), controller, None, start_ms, bound)
    online = sum(1 for leader in stage.leaders().values() if leader >= 0)
    console.detail(f"all online after {window.seconds} s: {online:,} of {n:,} partitions led")
    row = Measure(
        MEASURE,
        f"topic creation, {layout.topics:,} x {n // layout.topics} partitions",
        n,
        window.seconds if window.seconds is not None else float("nan"),
        create_s + rpc_s,
        f"multi creates of the same {layout.znode_count():,} znodes + gRPC round trip "
        f"of a {n:,}-partition request",
        note=f"{online:,} of {n:,} partitions online",
        extra={
            "topics": layout.topics,
            "online_after": online,
            "create_floor_seconds": round(create_s, 6),
            "rpc_floor_seconds": round(rpc_s, 6),
        },
    )
    return [row], list(profile_lines(profiles))
