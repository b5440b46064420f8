"""`chaos.hunt.reach_events`: which runs brought the moment each switch's bug acts in,
read from the run directories' event logs from each run's start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chaos.hunt.reach_events import MOMENTS, main, moments_of, render, run_dirs
from rundir.events import Event


def _event(node: str, ts: int, kind: str, **fields: Any) -> Event:
    return Event(node, ts, ts, kind, fields)


def _shown(bug: str, events: list[Event]) -> bool:
    (moment,) = [m for m in MOMENTS if bug in m.bugs]
    return moment.shown(events)


def test_a_superseded_controller_s_stopped_write_is_kafka_6082_s_moment() -> None:
    stopped = _event("broker1", 1, "controller_resigned", reason="an epoch-fenced write failed: x")
    expired = _event("broker1", 1, "controller_resigned", reason="its ZooKeeper session expired")
    assert _shown("kafka-6082", [stopped])
    assert not _shown("kafka-6082", [expired])
    assert _shown("kafka-5310", [expired])


def test_a_controller_elected_again_after_its_expiry_needs_the_same_process() -> None:
    expired = _event("broker2", 1, "controller_resigned", reason="its ZooKeeper session expired")
    again = _event("broker2", 3, "controller_elected", controller_epoch=5)
    restarted = _event("broker2", 2, "node_started")
    assert _shown("kafka-4229", [expired, again])
    assert not _shown("kafka-4229", [expired, restarted, again])
    assert not _shown("kafka-4229", [expired, _event("broker3", 3, "controller_elected")])


def test_a_registration_after_a_lost_session_in_the_same_process() -> None:
    lost = _event("broker3", 1, "zk_session_state", state="lost")
    registered = _event("broker3", 2, "broker_registered", broker_epoch=9)
    assert _shown("kafka-9839", [lost, registered])
    assert _shown("kafka-7165", [lost, registered])
    assert not _shown("kafka-9839", [registered, lost])


def test_the_active_controller_reconnecting_within_its_session() -> None:
    def connected(ts: int, session: str) -> Event:
        return _event("broker1", ts, "zk_session_state", state="connected", session_id=session)

    elected = _event("broker1", 2, "controller_elected")
    assert _shown("kafka-13407", [connected(1, "0x1"), elected, connected(3, "0x1")])
    assert not _shown("kafka-13407", [connected(1, "0x1"), elected, connected(3, "0x2")])
    assert not _shown("kafka-13407", [connected(1, "0x1"), connected(3, "0x1")])


def test_an_election_with_a_deletion_or_reassignment_unfinished() -> None:
    asked = _event("broker1", 1, "topic_deletion_requested", topics=["side"])
    done = _event("broker1", 2, "topic_deletion_completed", topic="side")
    elected = _event("broker2", 3, "controller_elected")
    assert _shown("kafka-1681", [asked, elected])
    assert not _shown("kafka-1681", [asked, done, elected])
    moving = _event("broker1", 1, "reassignment_started", topic="t", partition=0)
    assert _shown("kafka-1681", [moving, elected])


def _write_run(root: Path, name: str, started_ms: int, lines: list[dict[str, Any]]) -> Path:
    run = root / name
    (run / "events").mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"started_ms": started_ms}))
    with (run / "events" / "broker1.jsonl").open("w") as out:
        for seq, record in enumerate(lines):
            envelope = {"v": 2, "node": "broker1", "seq": seq, "mono_ms": record["ts"]}
            out.write(json.dumps({**envelope, **record}) + "\n")
    return run


@pytest.fixture
def soak(tmp_path: Path) -> Path:
    moved = {"kind": "controller_resigned", "controller_id": 1, "controller_epoch": 4}
    stopped = {**moved, "reason": "an epoch-fenced write failed: /controller_epoch changed"}
    _write_run(tmp_path, "run-1", 1000, [{"ts": 1500, **stopped}])
    # the same line before this run's start (a kept cluster's log) does not count
    _write_run(tmp_path, "run-2", 2000, [{"ts": 1500, **stopped}])
    (tmp_path / "summary.json").write_text("{}")
    return tmp_path


def test_only_events_from_each_run_s_start_count(soak: Path) -> None:
    assert [p.name for p in run_dirs([soak])] == ["run-1", "run-2"]
    assert moments_of(soak / "run-1") == {"kafka-6082"}
    assert moments_of(soak / "run-2") == frozenset()


def test_the_table_gives_each_moment_s_share(soak: Path) -> None:
    table = render({"a": frozenset({"kafka-6082"}), "b": frozenset()})
    assert "| `kafka-6082` | 1/2 | 50% |" in table
    assert "| `kip-380`, `kafka-1120` | 0/2 | 0% |" in table


def test_main_prints_the_table_or_says_nothing_read(
    soak: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(soak)]) == 0
    assert "| `kafka-6082` | 1/2 | 50% |" in capsys.readouterr().out
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main([str(empty)]) == 2
    assert "no run directory read" in capsys.readouterr().err
