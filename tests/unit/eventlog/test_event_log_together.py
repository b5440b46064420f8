"""`EventLog.together`: a thread's events inside the block reach the file together at its
end, in order and with the times they were emitted at; other threads write as usual."""

from __future__ import annotations

import threading
from pathlib import Path

from eventlog import EventLog, LeaderElectionFailed, NodeStarted, NodeStopped, read_events


def _elected(partition: int) -> LeaderElectionFailed:
    return LeaderElectionFailed(topic="t", partition=partition, reason="x", controller_epoch=1)


def test_events_inside_the_block_are_written_at_its_end(tmp_path: Path) -> None:
    log = EventLog(tmp_path, "b1")
    assert log.path is not None
    with log.together():
        first = log.emit(_elected(0))
        log.emit(_elected(1))
        assert read_events(log.path) == []
        other = threading.Thread(target=log.emit, args=(NodeStarted(broker_id=1, zk_connect="zk"),))
        other.start()
        other.join()
        assert [e["kind"] for e in read_events(log.path)] == ["node_started"]
    events = read_events(log.path)
    assert [e.get("partition") for e in events] == [None, 0, 1]
    assert events[1]["ts"] == first["ts"]
    log.emit(NodeStopped(broker_id=1))
    assert read_events(log.path)[-1]["kind"] == "node_stopped"
    log.close()


def test_nested_blocks_join_the_outermost(tmp_path: Path) -> None:
    log = EventLog(tmp_path, "b1")
    assert log.path is not None
    with log.together():
        with log.together():
            log.emit(_elected(0))
        assert read_events(log.path) == []
    assert len(read_events(log.path)) == 1
    log.close()
