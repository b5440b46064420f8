"""The run directory: its layout, atomic JSON writes, the version check and the event copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from rundir.layout import RUN_DIR_VERSION, RunDir, check_version, new_run_id


def test_a_new_run_directory_has_its_subdirectories(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "r1").create()
    assert run.history.is_dir()
    assert run.events.is_dir()
    assert run.run_id == "r1"


def test_json_round_trips_and_leaves_no_temp_file(tmp_path: Path) -> None:
    run = RunDir(tmp_path).create()
    run.write_json(run.config, {"run_dir_version": RUN_DIR_VERSION, "seed": 7})
    assert run.read_json(run.config) == {"run_dir_version": RUN_DIR_VERSION, "seed": 7}
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


def test_a_config_of_another_version_is_refused(tmp_path: Path) -> None:
    check_version({"run_dir_version": RUN_DIR_VERSION}, tmp_path)
    with pytest.raises(ValueError, match="version 99"):
        check_version({"run_dir_version": 99}, tmp_path)


def test_events_are_copied_whole(tmp_path: Path) -> None:
    source = tmp_path / "cluster-events"
    source.mkdir()
    (source / "broker1.jsonl").write_text('{"kind":"a"}\n{"kind":"b"}\n')
    (source / "notes.txt").write_text("not an event log")
    run = RunDir(tmp_path / "run").create()
    assert run.copy_events(source) == ["broker1"]
    assert (run.events / "broker1.jsonl").read_text() == '{"kind":"a"}\n{"kind":"b"}\n'


def test_run_ids_name_the_scenario_and_seed() -> None:
    assert new_run_id("broker-failure", 7).endswith("-broker-failure-s7")
    assert new_run_id("random", None).endswith("-random")
