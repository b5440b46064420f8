"""The three calls brokers and clients make of the controller, answered on
`controller-event-thread`: ControlledShutdown (a stopping broker asks for its leaderships to
move, `controller.controlled_shutdown`), ElectLeaders (preferred or unclean elections of
the partitions named, `controller.replica_election`) and AlterIsr (a partition leader asks
for a new ISR, `controller.alter_isr`). An inactive controller answers
NOT_CONTROLLER; one whose epoch-fenced write fails while answering also answers
NOT_CONTROLLER and lets the `ControllerMovedError` resign it."""

from __future__ import annotations

from controller import events as ev
from controller.active import ActiveController
from controller.controlled_shutdown import controlled_shutdown
from controller.leader_balance import ElectionType
from eventlog import EventLog
from rpc.errors import Errors
from rpc.messages import (
    AlterIsrResponse,
    ControlledShutdownResponse,
    ElectLeadersResponse,
    PartitionElectionResult,
)
from zkdata.errors import ControllerMovedError


def answer_controlled_shutdown(
    active: ActiveController | None, events: EventLog, event: ev.ControlledShutdown
) -> None:
    """Move the stopping broker's leaderships away and answer with the partitions it still
    leads (event thread); `active` is None while this controller is not the active one."""
    if active is None:
        event.callback(ControlledShutdownResponse(Errors.NOT_CONTROLLER))
        return
    try:
        response = controlled_shutdown(
            active.ctx,
            active.partitions,
            active.replicas,
            events,
            event.broker_id,
            event.broker_epoch,
        )
    except ControllerMovedError:
        event.callback(ControlledShutdownResponse(Errors.NOT_CONTROLLER))
        raise
    event.callback(response)


def answer_elect_leaders(active: ActiveController | None, event: ev.ElectLeaders) -> None:
    """Run the elections an ElectLeaders call asks for and answer with each partition's
    outcome (event thread); `active` is None while this controller is not the active one."""
    if active is None:
        event.callback(ElectLeadersResponse(Errors.NOT_CONTROLLER))
        return
    if event.election_type not in (0, 1):
        event.callback(ElectLeadersResponse(Errors.INVALID_REQUEST))
        return
    try:
        outcomes = active.elections.elect_leaders(
            ElectionType(event.election_type), event.partitions
        )
    except ControllerMovedError:
        event.callback(ElectLeadersResponse(Errors.NOT_CONTROLLER))
        raise
    event.callback(
        ElectLeadersResponse(
            Errors.NONE,
            tuple(PartitionElectionResult(tp, error) for tp, error in sorted(outcomes.items())),
        )
    )


def answer_alter_isr(active: ActiveController | None, event: ev.AlterIsrReceived) -> None:
    """Judge and write the ISRs an AlterIsr asks for and answer (event thread); `active` is
    None while this controller is not the active one."""
    if active is None:
        event.callback(AlterIsrResponse(Errors.NOT_CONTROLLER))
        return
    try:
        response = active.process_alter_isr(event.request)
    except ControllerMovedError:
        event.callback(AlterIsrResponse(Errors.NOT_CONTROLLER))
        raise
    event.callback(response)
