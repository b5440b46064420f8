"""Clearing an earlier run's admin work off a hunt's or soak's own compose project, so
that the next run starts on a cluster proven clean: the hunt keeps its cluster between
runs, and a run that left a reassignment stuck, or a topic whose deletion never
finished, would otherwise carry it into every later run (each of their reassignments
refused behind it).

    stop every broker                  # no controller may see topics vanish under it
    wipe the requests and the topics they name (`chaos.cluster.leftovers.wipe_leftovers`)
    start every broker, wait until registered, a controller elected and nothing in flight

Only for the projects the hunt and the soak bring up themselves (their topics are all
earlier runs'); a user's `python -m chaos run` is refused instead, naming the work
(`chaos.run.setup.LeftoverWork`). Caller's thread.
"""

from __future__ import annotations

from collections.abc import Callable

from chaos.cluster.handle import ClusterHandle
from chaos.cluster.leftovers import Leftovers, find_leftovers, wipe_leftovers
from chaos.run.setup import check_ready
from rundir.invariants import RunVerdict
from rundir.invariants.names import REASSIGNMENT_COMPLETES, TOPIC_DELETION_COMPLETES

__all__ = ["STALLS", "STOP_S", "left_stuck", "present", "tidy"]

#: The invariants whose allowed violations (Kafka 2.x's deletion-reassignment deadlock)
#: leave work in flight after a run that held.
STALLS = frozenset({REASSIGNMENT_COMPLETES, TOPIC_DELETION_COMPLETES})

#: Seconds a broker gets to shut down (controlled shutdown) before it is killed.
STOP_S = 10.0


def tidy(project: str, seen: Leftovers, say: Callable[[str], None] = print) -> None:
    """Stop the brokers of `project`, wipe what is in flight (what was `seen`, and what
    is found once they are down), and start them again; `RunSetupError` when the cluster
    does not come back clean."""
    say(f"tidying {project}: {seen.describe()}")
    with ClusterHandle.for_project(project) as cluster:
        brokers = sorted(cluster.brokers().values())
        for service in brokers:
            cluster.stop(service, STOP_S)
        found = cluster.read_zk(find_leftovers)
        every = Leftovers(
            tuple(sorted({*seen.reassigning, *found.reassigning})),
            tuple(sorted({*seen.deleting, *found.deleting})),
            seen.electing or found.electing,
        )
        cluster.read_zk(lambda zk: wipe_leftovers(zk, every))
        for service in brokers:
            cluster.start(service)
        check_ready(cluster)
    say(f"tidied {project}: removed topics {', '.join(every.topics) or 'none'}")


def left_stuck(verdict: RunVerdict) -> bool:
    """Whether a run allowed a stall that stays after it (`STALLS`): the next run need
    not wait for that work to finish before it is tidied."""
    return any(r.allowed and r.violations for r in verdict.results if r.name in STALLS)


def present(project: str) -> Leftovers:
    """What is in flight on `project` now (one read, no waiting)."""
    with ClusterHandle.for_project(project) as cluster:
        return cluster.read_zk(find_leftovers)
