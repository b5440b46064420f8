"""`EventLog.together`: a thread's events inside the block reach the file together at its
end, in order and with the times they were emitted at; other threads write as usual."""

from __future__ import annotations

import threading
from pathlib import Path

from eventlog import EventKind, EventLog, read_events


def test_events_inside_the_block_are_written_at_its_end(tmp_path: Path) -> None:
    log = EventLog(tmp_path, "b1")
    assert log.path is not None
    with log.together():
        first = log.emit(EventKind.LEADER_ELECTED, partition=0)
        log.emit(EventKind.LEADER_ELECTED, partition=1)
        assert read_events(log.path) == []
        other = threading.Thread(target=log.emit, args=(EventKind.NODE_STARTED,))
        other.start()
        other.join()
        assert [e["kind"] for e in read_events(log.path)] == ["node_started"]
    events = read_events(log.path)
    assert [e.get("partition") for e in events] == [None, 0, 1]
    assert events[1]["ts"] == first["ts"]
    log.emit(EventKind.NODE_STOPPED)
    assert read_events(log.path)[-1]["kind"] == "node_stopped"
    log.close()


def test_nested_blocks_join_the_outermost(tmp_path: Path) -> None:
    log = EventLog(tmp_path, "b1")
    assert log.path is not None
    with log.together():
        with log.together():
            log.emit(EventKind.LEADER_ELECTED, partition=0)
        assert read_events(log.path) == []
    assert len(read_events(log.path)) == 1
    log.close()
