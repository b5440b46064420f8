"""The history split by partition into buckets on disk (`rundir.checker.spill`): every
line lands in the bucket of its partition with its place in the history, the buckets
read back give the history's order, and a torn line or a line that breaks the schema is
skipped or named as in the original file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rundir.checker.spill import MAX_BUCKETS, Spill, bucket_count, spill_history
from rundir.history import (
    FINAL_READ_PROCESS,
    HistoryFormatError,
    HistoryOp,
    history_path,
    read_history,
)

BUCKETS = 3


def _op(process: str, t: int, partition: int, **fields: Any) -> HistoryOp:
    op = HistoryOp("invoke", "send", process, t, 0, "t", partition, None, f"v{t}", None, t)
    return op._replace(**fields)


def _history(tmp_path: Path) -> list[Path]:
    files = {
        "p0": [_op("p0", t, t % 7) for t in range(0, 40, 2)],
        "p1": [_op("p1", t, (t * 5) % 7, value=f'"partition":{t}') for t in range(0, 40, 3)],
        FINAL_READ_PROCESS: [
            _op(FINAL_READ_PROCESS, 50 + t, t, f="poll", value=None, offset=0) for t in range(7)
        ],
    }
    paths = []
    for process, ops in files.items():
        path = history_path(tmp_path, process)
        path.write_text("".join(op.to_json() + "\n" for op in ops), encoding="utf-8")
        paths.append(path)
    return paths


def _spill(tmp_path: Path, paths: list[Path], name: str = "spill") -> Spill:
    scratch = tmp_path / name
    scratch.mkdir()
    own = [i for i, p in enumerate(paths) if p.stem == FINAL_READ_PROCESS]
    return spill_history(paths, scratch, BUCKETS, own, FINAL_READ_PROCESS)


def test_each_line_lands_in_its_partition_s_bucket_and_the_buckets_merge_to_the_history(
    tmp_path: Path,
) -> None:
    paths = _history(tmp_path)
    spill = _spill(tmp_path, paths)

    placed = []
    for bucket in range(BUCKETS):
        ops = list(spill.ops(bucket))
        assert all(op.partition % BUCKETS == bucket for *_, op in ops)
        assert ops == sorted(ops, key=lambda p: p[:3])
        placed.extend(ops)
    placed.sort(key=lambda p: p[:3])
    assert [op for *_, op in placed] == read_history(paths)
    assert {(file, line) for _, file, line, _ in placed} == {
        (i, n) for i, p in enumerate(paths) for n in range(len(p.read_text().splitlines()))
    }
    assert spill.final_started == 50


def test_a_line_naming_a_partition_twice_is_routed_by_its_own(tmp_path: Path) -> None:
    path = history_path(tmp_path, "p0")
    record = json.loads(_op("p0", 1, 4).to_json())
    record["extra"] = {"partition": 2}  # a field the schema ignores
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")

    spill = _spill(tmp_path, [path])

    assert [op.partition for *_, op in spill.ops(4 % BUCKETS)] == [4]


def test_a_torn_last_line_is_skipped_and_a_bad_line_named_in_its_own_file(
    tmp_path: Path,
) -> None:
    paths = _history(tmp_path)
    with paths[0].open("a", encoding="utf-8") as file:
        file.write(_op("p0", 99, 1).to_json()[:40])
    spill = _spill(tmp_path, paths)
    assert sum(1 for b in range(BUCKETS) for _ in spill.ops(b)) == len(read_history(paths))

    bad = json.loads(_op("p0", 100, 1).to_json())
    bad["time_ns"] = "soon"
    paths[0].write_text(json.dumps(bad) + "\n", encoding="utf-8")
    spill = _spill(tmp_path, paths, "again")
    with pytest.raises(HistoryFormatError, match=str(paths[0])):
        list(spill.ops(1 % BUCKETS))


def test_the_bucket_count_follows_the_history_s_size(tmp_path: Path) -> None:
    paths = _history(tmp_path)
    size = sum(p.stat().st_size for p in paths)

    assert bucket_count(paths, size) == 1
    assert bucket_count(paths, size // 4 + 1) == 4
    assert bucket_count([*paths, tmp_path / "missing.jsonl"], size) == 1
    assert bucket_count(paths, 1) == MAX_BUCKETS
