"""The per-run pass without Spark: the rows its figures read, typed by the explicit schemas
from the lines the chaos engine's loader decoded (`pipeline.lines`), the groups of runs
its tasks take (`run_pass.groups_for`), and one task's body over synthetic runs, including
one the invariants cannot read."""

from __future__ import annotations

import gc
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
)

from pipeline.lines import RunRows, column_converter, converter, run_rows
from pipeline.run_pass import groups_for, per_run
from pipeline.runs import discover
from pipeline.testing import write_run
from rundir.history import HistoryOp
from rundir.reader import RunLines, history_by_file, read_lines


def test_a_value_is_kept_only_when_it_fits_its_declared_type() -> None:
    integer, double = converter(IntegerType()), converter(DoubleType())
    boolean, string = converter(BooleanType()), converter(StringType())
    ints = converter(ArrayType(IntegerType()))
    assert [integer(v) for v in (3, True, 2.0, "3", 2**31, None)] == [
        3,
        None,
        None,
        None,
        None,
        None,
    ]
    assert [double(v) for v in (3, 2.5, True, "1")] == [3.0, 2.5, None, None]
    assert [boolean(v) for v in (True, 1, None)] == [True, None, None]
    assert [string(v) for v in ("a", None, 5, {"k": [1]})] == ["a", None, "5", '{"k":[1]}']
    assert ints([1, "x", False]) == [1, None, None]
    assert ints(7) is None


def _lines(tmp_path: Path) -> RunLines:
    events = {
        "broker1": [
            (1, {"v": 1, "ts": 10, "node": "broker1", "kind": "controller_elected",
                 "controller_epoch": 2}),
            (2, {"v": 1, "ts": 11, "node": "broker1", "kind": "broker_change", "dead": [2],
                 "live": [1, 3]}),
            (3, {"v": 1, "ts": 12, "node": "broker1", "kind": "broker_change", "dead": []}),
            (4, {"v": 1, "ts": 13, "node": "broker1", "kind": "control_request_sent",
                 "api": "LeaderAndIsr", "broker_id": 3}),
            (5, {"v": 1, "ts": 14, "node": "broker1", "kind": "control_request_sent",
                 "api": "UpdateMetadata", "broker_id": "three"}),
            (6, {"v": 1, "ts": 15, "node": "broker1", "kind": "fetch_done"}),
        ]
    }  # fmt: skip
    history: dict[Path, list[tuple[str, object]]] = {
        tmp_path / "p.jsonl": [
            ("", {"type": "invoke", "f": "send", "process": "p", "op_id": 0, "topic": "t",
                  "partition": 1, "wall_ms": 5, "time_ns": 7}),
            ("", {"type": "ok", "f": "send", "process": "p", "op_id": 0, "topic": "t",
                  "partition": 1, "wall_ms": 6}),
            ("", {"type": "ok", "f": "poll", "process": "p", "op_id": 1}),
            ("", {"f": "send", "process": "p"}),
            ("", ["not", "an", "object"]),
        ]
    }  # fmt: skip
    snapshots: list[tuple[int, str, object]] = [
        (1, "", {"after_heal_ms": -5, "live_brokers": [1], "partitions": []}),
        (2, "", {"after_heal_ms": 30, "live_brokers": [1, 2], "partitions": [
            {"topic": "t", "partition": 0, "leader": 1, "isr": [1, 2], "replicas": [2, 1]},
            {"topic": "t", "partition": 1, "leader": 3, "isr": [3], "replicas": [3]},
            {"topic": "t", "partition": 2, "leader": 2, "isr": [2], "replicas": [2, 1]},
            {"topic": "t", "partition": 3, "leader": None, "isr": [1], "replicas": [1]},
            "not a partition",
        ]}),
    ]  # fmt: skip
    return RunLines(tmp_path, events, history, snapshots)


def test_each_family_keeps_the_rows_and_columns_its_figures_read(tmp_path: Path) -> None:
    rows = RunRows()
    faults: list[Any] = [
        {"ts": 9, "fault": "f1", "kind": "kill", "targets": ["broker2", None, "zk1"],
         "phase": "start"},
        {"ts": 9, "fault": "f1", "kind": "kill"},
    ]  # fmt: skip
    run_rows(rows, "r1", _lines(tmp_path), faults)
    frames = rows.frames()
    events = frames["events"]
    assert list(events["ts"]) == [10, 11, 12, 14]
    assert list(events["noticed"]) == [True, True, False, False]
    assert events["broker_id"].isna().tolist() == [True, True, True, True]
    assert str(events["controller_epoch"].dtype) == "float64"  # a missing int, as toPandas
    sends = frames["sends"]
    assert list(sends["type"]) == ["invoke", "ok"]
    assert list(sends["time_ns"]) == [7, 0]
    assert list(sends["has_time_ns"]) == [True, False]
    assert list(sends["run_id"]) == ["r1", "r1"]
    fault_rows = frames["faults"]
    assert fault_rows.to_dict("records") == [
        {"run_id": "r1", "ts": 9, "fault": "f1", "kind": "kill", "targets": "broker2,zk1",
         "phase": "start"}
    ]  # fmt: skip
    healed = frames["snapshots"]
    assert list(healed["partition"].fillna(-1)) == [0, 1, 2, 3, -1]
    assert list(healed["whole"]) == [True, False, False, False, False]
    assert set(healed["after_heal_ms"]) == {30}


def test_a_run_without_rows_of_a_family_still_makes_a_typed_frame() -> None:
    frames = RunRows().frames()
    assert all(len(frame) == 0 for frame in frames.values())
    assert list(frames["sends"].columns)[:2] == ["run_id", "type"]


def _sized(tmp_path: Path, sizes: dict[str, int]) -> list[Any]:
    for name, size in sizes.items():
        write_run(tmp_path, name)
        (tmp_path / name / "history" / "padding.jsonl").write_text("x" * size)
    return list(discover([tmp_path]).runs)


def test_groups_hold_every_run_once_and_about_equal_bytes(tmp_path: Path) -> None:
    runs = _sized(tmp_path, {"a": 90_000, "b": 50_000, "c": 40_000, "d": 10_000, "e": 0})
    groups = groups_for(runs, 2)
    assert sorted(r for g in groups for r in g) == ["a", "b", "c", "d", "e"]
    # the largest first, each to the lighter group: a | b, c (90k each), d to a's, e to b's
    assert sorted(groups) == [["a", "d"], ["b", "c", "e"]]
    assert len(groups_for(runs, 9)) == 5
    assert groups_for(runs[:1], 4) == [["a"]]


def _tables(body_out: list[tuple[str, bytes]]) -> dict[str, Any]:
    return {name: pa.ipc.open_stream(io.BytesIO(data)).read_all() for name, data in body_out}


def test_one_task_judges_and_measures_its_runs_from_one_reading(tmp_path: Path) -> None:
    write_run(tmp_path, "clean")
    write_run(tmp_path, "lost", breaks=frozenset({"lost_write"}))
    write_run(tmp_path, "no-events")
    shutil.rmtree(tmp_path / "no-events" / "events")
    runs = discover([tmp_path]).runs
    body = per_run({r.run_id: r for r in runs}, 1000, plotting=True)
    tables = _tables(list(body(iter([["clean", "lost", "no-events"]]))))
    verdicts = {row["run_id"]: row for row in tables["verdicts"].to_pylist()}
    assert verdicts["clean"]["ok"] is True
    assert verdicts["clean"]["matches_runner"] is True
    assert verdicts["lost"]["violated"] == ["acknowledged_writes"]
    assert verdicts["no-events"]["ok"] is None
    assert "no events/ directory" in verdicts["no-events"]["error"]
    # the figures of the run without events still come from its history
    sent_by = {r: 0 for r in verdicts}
    for run_id in tables["sends"].column("run_id").to_pylist():
        sent_by[run_id] += 1
    assert sent_by["no-events"] == sent_by["clean"] > 0
    assert set(tables["failovers"].column("run_id").to_pylist()) == {"clean", "lost"}


@pytest.mark.parametrize("enabled", [True, False])
def test_a_task_leaves_the_cycle_collector_as_it_found_it(tmp_path: Path, enabled: bool) -> None:
    write_run(tmp_path, "clean")
    runs = discover([tmp_path]).runs
    seen: list[bool] = []
    body = per_run({r.run_id: r for r in runs}, 1000)
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        for _ in body(iter([["clean"]])):
            seen.append(gc.isenabled())
        assert seen
        assert set(seen) == {enabled}
    finally:
        (gc.enable if was else gc.disable)()


def test_the_lines_read_for_figures_skip_events_only_when_asked(tmp_path: Path) -> None:
    write_run(tmp_path, "r")
    shutil.rmtree(tmp_path / "r" / "events")
    with pytest.raises(ValueError, match="no events/ directory"):
        read_lines(tmp_path / "r")
    lines = read_lines(tmp_path / "r", events_required=False)
    assert lines.events == {}
    assert lines.history
    assert lines.snapshots


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=6,
)
column_kinds = st.sampled_from(
    [IntegerType(), LongType(), DoubleType(), BooleanType(), StringType(), ArrayType(IntegerType())]
)


@settings(max_examples=300, deadline=None)
@given(kind=column_kinds, values=st.lists(json_values, max_size=6))
def test_a_column_is_converted_as_its_values_one_by_one(kind: DataType, values: list[Any]) -> None:
    each = converter(kind)
    assert column_converter(kind)(values) == [each(v) for v in values]


@settings(max_examples=100, deadline=None)
@given(
    partitions=st.lists(st.integers(-(2**33), 2**33), min_size=1, max_size=4),
    nanos=st.lists(st.integers(-(2**64), 2**64), min_size=1, max_size=4),
)
def test_sends_from_decoded_operations_equal_those_from_the_lines(
    partitions: list[int], nanos: list[int]
) -> None:
    ops = [
        HistoryOp("invoke" if i % 2 else "ok", "poll" if i % 3 == 2 else "send", "p", n, 5, "t",
                  partitions[i % len(partitions)], None, f"v{i}", None, i)
        for i, n in enumerate(nanos)
    ]  # fmt: skip
    path = Path("history") / "p.jsonl"
    lines = RunLines(
        Path("."), {}, {path: [(op.to_json(), json.loads(op.to_json())) for op in ops]}, []
    )
    from_lines, from_ops = RunRows(), RunRows()
    run_rows(from_lines, "r", lines, [])
    run_rows(from_ops, "r", lines, [], history_by_file(lines))
    assert from_ops.columns["sends"] == from_lines.columns["sends"]
    assert from_ops.columns["sends"]["type"]  # not vacuous: the sends are there
