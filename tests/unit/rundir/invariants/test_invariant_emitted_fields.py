"""The invariants read the fields the emitters really write: events recorded from the
broker's `ControlRequestHandler` are judged by invariants 2 and 3 without a field missing."""

from __future__ import annotations

from broker_node.control_requests import ControlRequestHandler
from eventlog import BrokerRegistered
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rundir.events import Event
from rundir.invariants import broker_epoch_fencing, controller_epoch_fencing


def _shutdown(_: m.ControlledShutdownRequest) -> m.ControlledShutdownResponse:
    raise AssertionError("not called")


def test_a_real_handler_s_events_are_judged_in_full() -> None:
    log = RecordingEventLog("broker1")
    epoch = [100]
    handler = ControlRequestHandler(1, lambda: epoch[0], log, _shutdown)
    log.emit(
        BrokerRegistered(
            broker_id=1,
            broker_epoch=100,
            previous_broker_epoch=-1,
            reregistration=False,
            session_id="0x1",
        )
    )
    handler.update_metadata(m.UpdateMetadataRequest(m.ControlHeader(2, 3, 100), (), ()))
    epoch[0] = 200
    log.emit(
        BrokerRegistered(
            broker_id=1,
            broker_epoch=200,
            previous_broker_epoch=100,
            reregistration=True,
            session_id="0x2",
        )
    )
    handler.update_metadata(m.UpdateMetadataRequest(m.ControlHeader(2, 3, 100), (), ()))
    handler.update_metadata(m.UpdateMetadataRequest(m.ControlHeader(2, 2, 200), (), ()))
    handler.update_metadata(m.UpdateMetadataRequest(m.ControlHeader(2, 4, 200), (), ()))
    logs = {"broker1": tuple(Event.from_record(r, i) for i, r in enumerate(log.events, start=1))}
    assert [e.kind for e in logs["broker1"]].count("request_accepted") == 2
    for result in (broker_epoch_fencing(logs), controller_epoch_fencing(logs)):
        assert result.ok, result.violations
        assert result.checked == 2
        assert result.note == ""
