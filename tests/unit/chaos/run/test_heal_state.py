"""The heal state on disk: entries round-trip, the project pointer lists a run while it
holds faults and drops it after, and unreadable or foreign files are refused, not
overwritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chaos.run.heal_state import (
    STATE_FILE,
    ActiveFault,
    HealState,
    HealStateError,
    pointer_path,
    state_files,
)


def _fault(fault_id: str, kind: str = "kill") -> ActiveFault:
    return ActiveFault(fault_id, kind, ("broker1",), {"targets": ["broker1"]}, 1_700_000_000_000)


def test_entries_round_trip_in_order_and_the_pointer_follows(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "r1"
    state = HealState(run, "p")
    assert state.load() == []
    state.add(_fault("f1"))
    state.add(_fault("f2", "stop"))
    assert state.load() == [_fault("f1"), _fault("f2", "stop")]
    assert state.pointer == tmp_path / "runs" / ".chaos-state" / "p.json"
    assert state_files(state.pointer.parent, "p") == [(run / STATE_FILE).resolve()]

    state.remove("f1")
    assert state.load() == [_fault("f2", "stop")]
    state.remove("f2")
    assert state.load() == []
    assert not state.pointer.exists()
    assert json.loads((run / STATE_FILE).read_text())["faults"] == []


def test_two_runs_of_one_project_share_the_pointer(tmp_path: Path) -> None:
    a = HealState(tmp_path / "a", "p", tmp_path / "state")
    b = HealState(tmp_path / "b", "p", tmp_path / "state")
    other = HealState(tmp_path / "c", "q", tmp_path / "state")
    a.add(_fault("f1"))
    b.add(_fault("f1"))
    other.add(_fault("f1"))
    assert state_files(tmp_path / "state", "p") == [a.path.resolve(), b.path.resolve()]
    a.remove("f1")
    assert state_files(tmp_path / "state", "p") == [b.path.resolve()]
    assert state_files(tmp_path / "state", "q") == [other.path.resolve()]


def test_adding_an_id_again_replaces_the_entry(tmp_path: Path) -> None:
    state = HealState(tmp_path / "r", "p")
    state.add(_fault("f1"))
    state.add(_fault("f1", "pause"))
    assert state.load() == [_fault("f1", "pause")]


def test_a_state_file_of_another_project_is_refused(tmp_path: Path) -> None:
    HealState(tmp_path / "r", "p").add(_fault("f1"))
    with pytest.raises(HealStateError, match="project 'p', not 'q'"):
        HealState(tmp_path / "r", "q").load()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "is not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"project": "p", "faults": {}}', "`faults` is not a list"),
        ('{"project": "p", "faults": [{"id": "f1"}]}', "malformed fault entry"),
    ],
)
def test_a_damaged_state_file_is_reported_and_kept(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / STATE_FILE).write_text(text)
    state = HealState(tmp_path / "r", "p")
    with pytest.raises(HealStateError, match=message):
        state.load()
    with pytest.raises(HealStateError):
        state.add(_fault("f2"))
    assert (tmp_path / "r" / STATE_FILE).read_text() == text


def test_a_pointer_of_another_project_is_refused(tmp_path: Path) -> None:
    path = pointer_path(tmp_path, "p")
    path.write_text(json.dumps({"project": "q", "state_files": []}))
    with pytest.raises(HealStateError, match="not a heal pointer of project 'p'"):
        state_files(tmp_path, "p")
