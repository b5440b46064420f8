"""`EventLog` and `read_events`: one JSON line per event, read back whole; torn lines are
skipped; a log without a run directory writes nothing. Files live under `tmp_path`."""

from __future__ import annotations

import dataclasses
import datetime
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from eventlog import (
    SCHEMA_VERSION,
    BrokerChange,
    ControllerElected,
    ControllerObserved,
    Event,
    EventLog,
    MalformedZnode,
    NodeStarted,
    NodeStopped,
    ZkSessionState,
    event_log_path,
    read_events,
    read_numbered_events,
)
from eventlog.event import encoding
from eventlog.log import encode_event


@pytest.fixture
def log(tmp_path: Path) -> Iterator[EventLog]:
    """broker1's event log in a fresh run directory."""
    event_log = EventLog(tmp_path, "broker1")
    yield event_log
    event_log.close()


def test_log_file_lives_under_events_named_after_the_node(tmp_path: Path, log: EventLog) -> None:
    assert event_log_path(tmp_path, "broker1") == tmp_path / "events" / "broker1.jsonl"
    assert log.path == tmp_path / "events" / "broker1.jsonl"


def test_emit_writes_one_json_line_with_the_envelope_and_fields(
    tmp_path: Path, log: EventLog
) -> None:
    before, mono_before = int(time.time() * 1000), time.monotonic_ns() // 1_000_000
    log.emit(
        ControllerElected(controller_id=1, controller_epoch=7, epoch_zk_version=3, epoch_zxid=None)
    )
    after, mono_after = int(time.time() * 1000), time.monotonic_ns() // 1_000_000

    text = (tmp_path / "events" / "broker1.jsonl").read_text(encoding="utf-8")
    assert text.endswith("\n")
    lines = text.splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record["v"] == SCHEMA_VERSION == 2
    assert before <= record["ts"] <= after
    assert isinstance(record["ts"], int)
    assert record["node"] == "broker1"
    assert record["kind"] == "controller_elected"
    assert record["controller_epoch"] == 7
    assert record["controller_id"] == 1
    assert record["seq"] == 1
    assert mono_before <= record["mono_ms"] <= mono_after
    assert list(record) == [
        *("v", "ts", "node", "kind", "seq", "mono_ms"),
        *("controller_id", "controller_epoch", "epoch_zk_version", "epoch_zxid"),
    ]
    assert record["epoch_zxid"] is None


def test_seq_counts_the_events_in_the_order_they_were_emitted(log: EventLog) -> None:
    with log.together():
        held = log.emit(BrokerChange(new=[3], dead=[], bounced=[], live=[3], epochs={"3": 7}))
        other = threading.Thread(
            target=lambda: log.emit(BrokerChange(new=[], dead=[3], bounced=[], live=[], epochs={}))
        )
        other.start()
        other.join()
    assert log.path is not None
    written = read_events(log.path)
    # the held event reaches the file after the other thread's, but keeps its place
    assert [e["seq"] for e in written] == [2, 1]
    assert held["seq"] == 1


def test_emit_returns_the_record_as_written(log: EventLog) -> None:
    record = log.emit(
        BrokerChange(new=[3], dead=[], bounced=[], live=[1, 3], epochs={"1": 6, "3": 7})
    )
    assert log.path is not None
    assert read_events(log.path) == [record]


def test_lines_are_compact_json(tmp_path: Path, log: EventLog) -> None:
    log.emit(NodeStarted(broker_id=42, zk_connect="zk1:2181/x"))
    line = (tmp_path / "events" / "broker1.jsonl").read_text(encoding="utf-8").strip()
    assert ", " not in line
    assert '": ' not in line


def test_events_are_read_back_in_order(log: EventLog) -> None:
    for i in range(3):
        log.emit(ControllerObserved(controller_id=i))
    assert log.path is not None
    events = read_events(log.path)
    assert [e["kind"] for e in events] == ["controller_observed"] * 3
    assert [e["controller_id"] for e in events] == [0, 1, 2]


def test_values_json_cannot_hold_are_written_as_strings(log: EventLog) -> None:
    log.emit(MalformedZnode(path=Path("/brokers/ids/1"), reason=b"\xff"))  # type: ignore[arg-type]
    assert log.path is not None
    (event,) = read_events(log.path)
    assert event["path"] == "/brokers/ids/1"
    assert event["reason"] == str(b"\xff")


def test_torn_last_line_is_ignored(log: EventLog) -> None:
    log.emit(NodeStarted(broker_id=1, zk_connect="zk"))
    log.emit(ZkSessionState(state="connected", session_id=None))
    assert log.path is not None
    with open(log.path, "a", encoding="utf-8") as f:
        f.write('{"v":1,"ts":1700000000000,"node":"broker1","kind":"contr')
    events = read_events(log.path)
    assert [e["kind"] for e in events] == ["node_started", "zk_session_state"]


def test_event_written_after_a_torn_line_by_a_restarted_node_is_kept(tmp_path: Path) -> None:
    """A broker killed mid-line and restarted into the same run directory appends to the
    same file; its first event must not be glued onto the torn line and lost."""
    first = EventLog(tmp_path, "broker1")
    first.emit(NodeStarted(broker_id=1, zk_connect="zk"))
    first.close()
    path = event_log_path(tmp_path, "broker1")
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"v":1,"ts":1700000000000,"node":"broker1","ki')  # killed mid-write

    restarted = EventLog(tmp_path, "broker1")
    try:
        restarted.emit(NodeStarted(broker_id=2, zk_connect="zk"))
    finally:
        restarted.close()

    assert [e.get("broker_id") for e in read_events(path)] == [1, 2]
    numbered = read_numbered_events(path)
    assert [(n, e.get("broker_id")) for n, e in numbered] == [(1, 1), (3, 2)]


def test_reading_a_missing_log_gives_no_events(tmp_path: Path) -> None:
    assert read_events(tmp_path / "events" / "nobody.jsonl") == []


def test_log_without_run_dir_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    null_log = EventLog(None, "broker9")
    record = null_log.emit(NodeStarted(broker_id=1, zk_connect="zk"))
    null_log.close()
    assert null_log.path is None
    assert record["node"] == "broker9"
    assert record["kind"] == "node_started"
    assert record["broker_id"] == 1
    assert list(tmp_path.iterdir()) == []


def test_two_nodes_write_separate_files(tmp_path: Path) -> None:
    a = EventLog(tmp_path, "broker1")
    b = EventLog(tmp_path, "broker2")
    try:
        a.emit(NodeStarted(broker_id=1, zk_connect="zk"))
        b.emit(NodeStopped(broker_id=2))
    finally:
        a.close()
        b.close()
    assert [e["node"] for e in read_events(event_log_path(tmp_path, "broker1"))] == ["broker1"]
    assert [e["kind"] for e in read_events(event_log_path(tmp_path, "broker2"))] == ["node_stopped"]


@pytest.mark.parametrize("field", ["v", "ts", "node", "kind"])
def test_a_type_with_a_field_named_like_the_envelope_is_refused(field: str) -> None:
    clashing = dataclasses.make_dataclass(
        "Clashing", [(field, str)], bases=(Event,), frozen=True, slots=True
    )
    clashing.kind = "clashing"  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="named like the envelope"):
        encoding(clashing)


# -- encoding ----------------------------------------------------------------------------


@dataclasses.dataclass
class _Point:
    x: int


@pytest.mark.parametrize(
    "fields",
    [
        {"topic": "orders", "partition": 3, "isr": [1, 2], "zxid": None, "unclean": False},
        {"nested": {"a": [1, "b", None]}, "ratio": 0.25, "text": 'quote " and \\ slash'},
        {"name": "caf\u00e9"},  # written as UTF-8, read back the same
        {"big": 2**70},  # beyond orjson's 64 bits: json writes it
        {"by_broker": {1: 2, 3: 4}},  # keys that are not strings: json writes them as strings
        {"when": datetime.datetime(2026, 11, 29, 1, 2, 3)},  # as its str, as before
        {"point": _Point(1), "ids": {7}},  # a dataclass and a set: their str
    ],
)
def test_an_event_reads_back_as_json_wrote_it(fields: dict[str, object]) -> None:
    """Events are encoded by orjson where it can, by `json` otherwise; either way a reader
    gets what `json.dumps(record, default=str)` would have given it."""
    record = {"v": 1, "ts": 5, "node": "b1", "kind": "leader_elected", **fields}
    line = encode_event(record)
    assert "\n" not in line
    assert json.loads(line) == json.loads(json.dumps(record, default=str))
