"""What a run leaves out rather than fails (`chaos.run.left_out`): actions ZooKeeper or
the controller could not answer while the schedule's faults held them, and the windows
in which a fault holds the ensemble."""

from __future__ import annotations

from kazoo.exceptions import ConnectionLoss, NodeExistsError

from admin.errors import ReassignmentInProgressError
from chaos.cluster.zk_off_loop import ZkNoAnswer
from chaos.errors import NoTargetNow
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step
from chaos.run import left_out
from chaos.run.actions import ActionFailed
from client.errors import ControllerUnknown, TransportError
from rpc.errors import RpcUnavailable


def test_no_answer_is_a_lost_connection_or_a_timeout_not_a_refusal() -> None:
    def failed(cause: Exception) -> ActionFailed:
        try:
            raise ActionFailed(f"add-partitions t: {cause!r}") from cause
        except ActionFailed as exc:
            return exc

    assert left_out.unanswered(ZkNoAnswer("read: no answer"))
    assert left_out.unanswered(failed(ConnectionLoss()))
    assert not left_out.unanswered(failed(NodeExistsError()))
    assert not left_out.unanswered(ActionFailed("add-partitions t: no such topic"))


def _failed_of(cause: Exception) -> ActionFailed:
    try:
        raise ActionFailed(f"elect-leaders t: {cause}") from cause
    except ActionFailed as exc:
        return exc


def test_a_spare_action_whose_controller_is_unreachable_is_left_out_while_a_step_holds() -> None:
    steps = (Step(10, 8, FaultSpec("pause", "controller")),)
    schedule = Schedule(1, steps, heal_at_s=30, end_s=45)
    elect = Action(12, "elect-leaders", (("topic", "t"),))
    unreachable = _failed_of(TransportError(RpcUnavailable("broker3:9092", "UNAVAILABLE")))
    assert left_out.spared(schedule, elect, unreachable) == "step 0 held the cluster"
    assert left_out.spared(schedule, elect, _failed_of(ControllerUnknown("none"))) is not None
    late = Action(40, "elect-leaders", (("topic", "t"),))  # nothing holds then
    assert left_out.spared(schedule, late, unreachable) is None
    reassign = Action(12, "reassign", (("topic", "t"),))  # a premise: never spared
    assert left_out.spared(schedule, reassign, unreachable) is None
    refused = _failed_of(ValueError("no such topic"))
    assert left_out.spared(schedule, elect, refused) is None


def test_an_action_whose_role_names_nobody_now_is_left_out_whatever_its_kind() -> None:
    schedule = Schedule(1, (), heal_at_s=30, end_s=45)
    retire = Action(12, "vacate", (("broker", "non-controller:2"),))
    gone = NoTargetNow("vacate: non-controller:2: 1 registered brokers besides the controller")
    assert left_out.spared(schedule, retire, gone) is not None


def test_a_zookeeper_fault_or_lost_reply_holds_the_ensemble_over_its_window() -> None:
    steps = (
        Step(5, 2, FaultSpec("zk-leader-kill", "zk-leader")),
        Step(30, 0, FaultSpec("zk-lost-reply", "non-controller")),
        Step(45, 5, FaultSpec("latency", "controller")),
    )
    schedule = Schedule(1, steps, heal_at_s=60, end_s=80)
    times = (4, 5, 16.9, 17.1, 29.9, 44.9, 45.1)
    held = {at: left_out.zookeeper_held_at(schedule, at) for at in times}
    # a server's window ends 10 s after it does; a lost reply's 10 s after it, then 5
    assert held == {4: None, 5: 0, 16.9: 0, 17.1: None, 29.9: None, 44.9: 1, 45.1: None}


def test_a_spare_action_refused_while_the_schedules_reassignment_runs_is_left_out() -> None:
    # a soak's run: a retirement moved the side topic too, and its growth came meanwhile
    retire = Action(9.0, "vacate", (("broker", "non-controller:2"),))
    grow = Action(15.0, "add-partitions", (("topic", "t-side"), ("partitions", 6)))
    schedule = Schedule(1, (), heal_at_s=30, end_s=45, actions=(retire, grow))
    moving = ReassignmentInProgressError("Topic 't-side' has a partition reassignment in progress")
    try:
        raise ActionFailed(f"add-partitions t-side: {moving}") from moving
    except ActionFailed as exc:
        refused = exc
    assert left_out.spared(schedule, grow, refused) == "the vacate at 9s was in progress"
    alone = Schedule(1, (), heal_at_s=30, end_s=45, actions=(grow,))  # not the schedule's
    assert left_out.spared(alone, grow, refused) is None
    delete = Action(15.0, "delete-topic", (("topic", "t-side"),))  # a premise: never spared
    assert left_out.spared(schedule, delete, refused) is None
