"""`BrokerFleet.wait_event`: waits for events that follow one another share a tail, so an
event written while the earlier wait was returning, or read in the same pass as the event
that ended it, still counts; a wait without a tail counts only what is written after it
starts. No broker process is started."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.shared.fleet import BrokerFleet
from eventlog import EventKind
from harness.zk_endpoint import ZkEndpoint


def _write(path: Path, *events: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as file:
        for event in events:
            line = {"v": 1, "ts": 1, "node": "broker2", **event}
            file.write(json.dumps(line, separators=(",", ":")) + "\n")  # as EventLog writes


def _fleet(tmp_path: Path) -> BrokerFleet:
    return BrokerFleet([1, 2], ZkEndpoint("127.0.0.1:1"), tmp_path, session_timeout_ms=6000)


CHANGE: dict[str, object] = {"kind": str(EventKind.BROKER_CHANGE), "dead": [1], "new": []}
OFFLINE: dict[str, object] = {
    "kind": str(EventKind.REPLICA_STATE_CHANGE),
    "broker_id": 1,
    "target": "OfflineReplica",
}


def test_waits_sharing_a_tail_find_events_written_together(tmp_path: Path) -> None:
    fleet = _fleet(tmp_path)
    _write(fleet.event_log(2), {"kind": str(EventKind.BROKER_CHANGE), "dead": [3]})
    events = fleet.event_tail(2)  # what was there before does not count
    _write(fleet.event_log(2), CHANGE, OFFLINE)
    change = fleet.wait_event(2, EventKind.BROKER_CHANGE, 5.0, events, dead=1)
    assert change["dead"] == [1]
    offline = fleet.wait_event(
        2, EventKind.REPLICA_STATE_CHANGE, 5.0, events, broker_id=1, target="OfflineReplica"
    )
    assert offline["target"] == "OfflineReplica"


def test_a_wait_without_a_tail_counts_only_later_events(tmp_path: Path) -> None:
    fleet = _fleet(tmp_path)
    _write(fleet.event_log(2), CHANGE, OFFLINE)
    with pytest.raises(TimeoutError, match="wrote no"):
        fleet.wait_event(2, EventKind.REPLICA_STATE_CHANGE, 0.2, broker_id=1)
