"""One fault of a synthetic run, as the cluster logs it (`SimCluster`): a broker stopped,
killed, paused or bounced (controlled shutdown), the controller or another one, or a
ZooKeeper leader killed. The session expires after the session timeout, a new controller
fails over when the old one is gone, the broker's leaderships move, and when the fault
is undone the broker comes back (a new process or its old one re-registering) and
rejoins the ISRs. Seeded; the calling thread. For benchmarks and tests only.
"""

from __future__ import annotations

from bench.pipeline.synthetic.cluster import SimCluster
from eventlog import (
    BrokerChange,
    ControlledShutdown,
    ControlledShutdownAttempt,
    ControllerResigned,
    IsrChanged,
    LogTruncated,
    NodeStarted,
    NodeStopped,
    ReplicaStateChange,
    ZkSessionState,
)
from pipeline.run_writer import SESSION_TIMEOUT_MS

__all__ = ["fault"]


def _bounce_out(cluster: SimCluster, ts: int, x: int) -> int:
    """A controlled shutdown of `x`: its leaderships move first, then it stops."""
    cluster.emit(
        ts,
        x,
        ControlledShutdownAttempt(
            broker_id=x, broker_epoch=cluster.broker_epoch[x], attempt=1, outcome="done"
        ),
    )
    led = [p for p, part in cluster.parts.items() if part.leader == x]
    at = ts - cluster.lag(5, 20)
    cluster.emit(
        at,
        cluster.controller,
        ControlledShutdown(
            broker_id=x,
            broker_epoch=cluster.broker_epoch[x],
            led=len(led),
            followed=0,
            remaining=0,
            controller_epoch=cluster.epoch,
        ),
    )
    for p in led:
        part = cluster.parts[p]
        isr = [b for b in part.isr if b != x]
        cluster.write_state(at + 1, p, isr[0], part.isr, "controlled_shutdown")
    cluster.send(at + 2, "LeaderAndIsr", cluster.live, len(led))
    cluster.emit(ts + cluster.lag(50, 200), x, NodeStopped(broker_id=x))
    return ts + 300


def _zk_blip(cluster: SimCluster, ts: int) -> int:
    """Every broker's ZooKeeper session is suspended and reconnects."""
    end = ts
    for b in sorted(cluster.live):
        cluster.emit(ts + cluster.lag(), b, ZkSessionState(state="suspended", session_id=None))
        back = ts + cluster.lag(800, 3000)
        cluster.emit(back, b, ZkSessionState(state="connected", session_id=f"0x{b:x}"))
        end = max(end, back)
    return end


def fault(
    cluster: SimCluster, ts: int, kind: str, role: str, stop: int
) -> tuple[str, int, int, int]:
    """Run one fault from `ts` until `stop`: its target, when it was stopped and
    undone, and when the cluster had settled."""
    if role == "zookeeper":
        end = _zk_blip(cluster, ts)
        return "zk1", stop, stop + cluster.lag(200, 900), end
    others = sorted(cluster.live - {cluster.controller})
    x = cluster.controller if role == "controller" else cluster.rng.choice(others)
    old_controller, old_epoch = cluster.controller, cluster.epoch
    gone_at = ts + cluster.lag(2, 10)
    if kind == "bounce":
        gone_at = _bounce_out(cluster, ts, x)
        detected = gone_at + cluster.lag(20, 80)
    else:
        detected = gone_at + SESSION_TIMEOUT_MS + cluster.lag(0, 400)
    if detected >= stop and kind in ("pause", "stop"):
        stop = detected + cluster.lag(500, 2000)
    _broker_gone(cluster, gone_at, detected, x)
    back = stop + (cluster.lag(1500, 4000) if kind in ("kill", "bounce") else cluster.lag(5, 50))
    if kind == "pause" and x == old_controller:
        cluster.emit(
            back,
            x,
            ControllerResigned(
                controller_id=x,
                controller_epoch=old_epoch,
                reason="its ZooKeeper session expired",
            ),
        )
    end = _broker_back(cluster, back, x, restarted=kind in ("kill", "bounce"))
    return f"broker{x}", stop, back, end


def _broker_gone(cluster: SimCluster, gone_at: int, detected: int, x: int) -> int:
    """`x` stopped answering at `gone_at`; its session expired at `detected`."""
    cluster.live.discard(x)
    at = detected
    if x == cluster.controller:
        at = cluster.failover(detected, min(cluster.live))
    c = cluster.controller
    cluster.emit(
        at + 1,
        c,
        BrokerChange(
            new=[],
            dead=[x],
            bounced=[],
            live=sorted(cluster.live),
            epochs={str(b): cluster.broker_epoch[b] for b in sorted(cluster.live)},
        ),
    )
    at += 2
    led = [p for p, part in cluster.parts.items() if part.leader == x]
    followed = [p for p, part in cluster.parts.items() if part.leader != x and x in part.isr]
    for p in led:
        isr = [b for b in cluster.parts[p].isr if b != x] or [
            b for b in cluster.parts[p].replicas if b in cluster.live
        ][:1]
        cluster.write_state(at, p, isr[0], isr, "offline")
        cluster.down[p].append((gone_at, at))
    for p in followed:
        part = cluster.parts[p]
        part.isr, part.epoch, part.version = (
            [b for b in part.isr if b != x],
            part.epoch + 1,
            part.version + 1,
        )
        cluster.emit(
            at,
            c,
            IsrChanged(
                topic=cluster.topic,
                partition=p,
                reason="replica offline",
                by="controller",
                replica=x,
                leader=part.leader,
                leader_epoch=part.epoch,
                isr=part.isr,
                zk_version=part.version,
                controller_epoch=cluster.epoch,
            ),
        )
    cluster.emit(
        at + 1,
        c,
        ReplicaStateChange(
            broker_id=x, target="OfflineReplica", replicas=len(led) + len(followed), failed=0
        ),
    )
    done = cluster.send(at + 2, "LeaderAndIsr", cluster.live, len(led) + len(followed))
    return cluster.send(done, "UpdateMetadata", cluster.live, len(cluster.parts))


def _broker_back(cluster: SimCluster, ts: int, x: int, restarted: bool) -> int:
    """`x` runs again: a new process, or the old one after its session was lost."""
    if restarted:
        cluster.emit(
            ts, x, NodeStarted(broker_id=x, zk_connect="zk1:2181,zk2:2181,zk3:2181/testbed")
        )
    else:
        cluster.emit(ts, x, ZkSessionState(state="lost", session_id=None))
    previous = -1 if restarted else cluster.broker_epoch[x]
    cluster.register(ts + cluster.lag(100, 400), x, previous)
    c = cluster.controller
    at = ts + cluster.lag(400, 600)
    cluster.emit(
        at,
        c,
        BrokerChange(
            new=[x] if restarted else [],
            dead=[],
            bounced=[] if restarted else [x],
            live=sorted(cluster.live),
            epochs={str(b): cluster.broker_epoch[b] for b in sorted(cluster.live)},
        ),
    )
    hosted = [p for p, part in cluster.parts.items() if x in part.replicas]
    at = cluster.send(at + 1, "UpdateMetadata", cluster.live, len(cluster.parts))
    at = cluster.send(at, "LeaderAndIsr", {x}, len(hosted))
    for p in hosted:
        part = cluster.parts[p]
        if x not in part.isr and part.leader in cluster.live:
            if cluster.rng.random() < 0.3:
                cluster.emit(
                    at + 2,
                    x,
                    LogTruncated(
                        topic=cluster.topic,
                        partition=p,
                        to_offset=cluster.rng.randint(0, 900),
                        removed=cluster.rng.randint(1, 20),
                        leader_epoch=part.epoch,
                        removed_records=[],
                    ),
                )
            at = cluster.isr_change(
                at + cluster.lag(200, 1500), p, sorted([*part.isr, x]), "expand"
            )
    return at
