"""The heal's supervisor: once every fault of a run is undone, a node that is still down
exited on its own, and it is started again, as a process supervisor (systemd, a
container orchestrator) restarts a Kafka broker or a ZooKeeper server that exits.

A Kafka 2.x broker exits when its start-up fails, for one when its ZooKeeper session
expires before it has registered (`KafkaServer.startup` is fatal on it): a broker
bounced while the ensemble has no leader does so, and without a restart it stays away
for the rest of the run, whatever the controller does. The exit stays on record in the
node's event log (`node_stopped` with no fault of the run stopping it) and in the
run's output, where `restart_exited` says whom it started. Runs on the runner's thread.
"""

from __future__ import annotations

from chaos.cluster.handle import ClusterHandle
from chaos.errors import FaultError
from chaos.faults.process import NOT_RUNNING

__all__ = ["restart_exited"]


def restart_exited(cluster: ClusterHandle) -> list[str]:
    """Start every service of `cluster` whose container is not running; one line for
    each, saying what was found and done."""
    said = []
    for service in cluster.services():
        try:
            status = cluster.status(service)
            if status not in NOT_RUNNING:
                continue
            cluster.start(service)
        except FaultError as exc:
            said.append(f"heal: {service} is down and did not start again: {exc}")
            continue
        said.append(f"heal: {service} was {status} with no fault holding it; started it again")
    return said
