"""An event whose handling raises anything but `ControllerMovedError`, a failed request
batch included, is reported (`event_failed`) and the controller stays active. Kafka 2.8
resigns instead when the batch of one of the controller's own sends fails to build or
send (`handleIllegalState`), while a state machine's round only fails its partitions
(kafka-differences.md, An error inside a state change or a send)."""

from __future__ import annotations

from typing import cast

from controller import events as ev
from controller.controller import KafkaController
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from zkdata.client import KafkaZkClient


def test_a_failed_batch_is_reported_and_the_controller_stays_active() -> None:
    events = RecordingEventLog()
    controller = KafkaController(3, cast(KafkaZkClient, object()), events, lambda: 0)
    controller._active_controller_id = 3  # won the election (not under test)
    controller.on_process_error(ev.BrokerChange(), RuntimeError("request batch failed"))
    assert controller.is_active
    [failed] = events.of_kind(EventKind.EVENT_FAILED)
    assert failed["event"] == "BrokerChange"
    assert "request batch failed" in failed["error"]
    assert events.of_kind(EventKind.CONTROLLER_RESIGNED) == []
