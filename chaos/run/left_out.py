"""What a run leaves out rather than fails: the rules the step loop
(`chaos.run.step_loop`) asks when an action fails or a role cannot be read. An action
whose role names nobody, or a spare one (`SPARE_ACTIONS`: no invariant or later action
needs it done) that ZooKeeper gave no answer for while a step of the schedule held the
ensemble, whose controller could not be reached while any step held, or that was refused
while a reassignment of the schedule was in progress (`spared`); a
step whose role ZooKeeper gave no answer for while a step held the ensemble
(`zookeeper_held_at`); a step whose fault works through the controller's network
namespace (`VIA_CONTROLLER`) counts the controller among its targets when it asks
whether another fault took one away. Pure; any thread.
"""

from __future__ import annotations

from collections.abc import Callable

from kazoo.exceptions import ConnectionLoss, OperationTimeoutError, SessionExpiredError
from kazoo.handlers.threading import KazooTimeoutError

from admin.errors import ReassignmentInProgressError
from chaos.cluster.zk_off_loop import ZkNoAnswer
from chaos.errors import NoTargetNow
from chaos.generator.overlap import on_zookeeper, window
from chaos.generator.schedule import Action, FaultSpec, Schedule
from client.errors import ControllerUnknown, TransportError

__all__ = [
    "SPARE_ACTIONS",
    "VIA_CONTROLLER",
    "held_at",
    "spared",
    "unanswered",
    "zookeeper_held_at",
]

#: The schedule's actions that reassign partitions (Kafka 2.x runs one reassignment at
#: a time, and partitions are not added to a topic being reassigned).
_MOVES = frozenset({"reassign", "vacate"})
#: The fault kinds that act from the controller's network namespace (the request
#: proxy), so that a fault taking the controller away meanwhile keeps them from starting.
VIA_CONTROLLER = frozenset({"request"})


def unanswered(exc: BaseException) -> bool:
    """Whether `exc` says ZooKeeper gave no answer (`ZkNoAnswer`, or an action failed of
    a lost connection or session, or a timeout), rather than refused. Pure."""
    return isinstance(exc, ZkNoAnswer) or isinstance(exc.__cause__, _NO_ANSWER)


def spared(schedule: Schedule, action: Action, exc: BaseException) -> str | None:
    """Why `action`, failed with `exc`, is left out rather than failed, or None: an
    action whose role names nobody now (`NoTargetNow`: a retirement's broker is down);
    a spare action (`SPARE_ACTIONS`) ZooKeeper gave no answer for while a step of the
    schedule held the ensemble, whose controller could not be reached (a transport
    failure, none known) while any step of the schedule held, or that was refused for a
    reassignment in progress after the schedule's own (`reassign`, `vacate`). Pure."""
    if isinstance(exc, NoTargetNow) or isinstance(exc.__cause__, NoTargetNow):
        return "the schedule's faults took what its role names"
    if action.kind not in SPARE_ACTIONS:
        return None
    if isinstance(exc.__cause__, ReassignmentInProgressError):
        moves = [a for a in schedule.actions if a.kind in _MOVES and a.at_s <= action.at_s]
        return f"the {moves[-1].kind} at {moves[-1].at_s:g}s was in progress" if moves else None
    if unanswered(exc):
        holder = zookeeper_held_at(schedule, action.at_s)
        return None if holder is None else f"step {holder} held ZooKeeper"
    holder = held_at(schedule, action.at_s)
    unreachable = isinstance(exc.__cause__, (TransportError, ControllerUnknown))
    return f"step {holder} held the cluster" if unreachable and holder is not None else None


#: The admin actions no invariant or later action needs done (see `spared`).
SPARE_ACTIONS = frozenset({"add-partitions", "alter-config", "elect-leaders", "move-controller"})

_NO_ANSWER = (ConnectionLoss, OperationTimeoutError, SessionExpiredError, KazooTimeoutError)


def held_at(
    schedule: Schedule, at_s: float, which: Callable[[FaultSpec], bool] = lambda _: True
) -> int | None:
    """The index of a step of `schedule` whose fault `which` accepts and whose window holds
    `at_s` seconds into the run, or None. Pure."""
    for i, step in enumerate(schedule.steps):
        start, end = window(step)
        if which(step.fault) and start <= at_s <= end:
            return i
    return None


def zookeeper_held_at(schedule: Schedule, at_s: float) -> int | None:
    """`held_at` for the steps on ZooKeeper (`on_zookeeper`). Pure."""
    return held_at(schedule, at_s, on_zookeeper)
