"""`stream_history` reads what `read_history` reads, in its order, one line at a time: torn
lines skipped, ties kept in file order (earlier files first), missing files empty, the
same error for a line that breaks the schema, and `HistoryOrderError` for a file that
goes back in time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rundir.history import HistoryFormatError, HistoryOp, read_history
from rundir.history_stream import (
    HistoryFiles,
    HistoryOrderError,
    scan_history_file,
    stream_history,
)


def _op(process: str, t: int, op_id: int) -> HistoryOp:
    value = f"{process}-{op_id}"
    return HistoryOp("invoke", "send", process, t, t, "t", 0, None, value, None, op_id)


def _write(path: Path, *ops: HistoryOp, tail: str = "") -> Path:
    path.write_text("".join(op.to_json() + "\n" for op in ops) + tail, encoding="utf-8")
    return path


def test_the_stream_is_read_history_s_merge(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", _op("a", 1, 0), _op("a", 3, 1), _op("a", 3, 2))
    b = _write(tmp_path / "b.jsonl", _op("b", 2, 0), _op("b", 3, 1), tail='{"v":1,"ty')
    paths = [b, a, tmp_path / "gone.jsonl"]

    streamed = list(stream_history(paths))

    assert streamed == read_history(paths)
    assert [(op.process, op.time_ns) for op in streamed] == [
        ("a", 1), ("b", 2), ("b", 3), ("a", 3), ("a", 3),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [({"v": 2}, "unsupported history version"), ({"partition": "0"}, "partition must be")],
)
def test_a_line_that_breaks_the_schema_raises_what_read_history_raises(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    record = json.loads(_op("a", 2, 1).to_json())
    record.update(change)
    path = _write(tmp_path / "a.jsonl", _op("a", 1, 0), tail=json.dumps(record) + "\n")

    with pytest.raises(HistoryFormatError, match=message) as streamed:
        list(stream_history([path]))
    with pytest.raises(HistoryFormatError) as whole:
        read_history([path])
    assert str(streamed.value) == str(whole.value)


def test_a_line_that_is_no_object_is_named_with_its_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.jsonl", tail="[1, 2]\n")
    with pytest.raises(HistoryFormatError, match=r"a\.jsonl: a line is not a JSON object"):
        list(stream_history([path]))


def test_a_file_that_goes_back_in_time_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.jsonl", _op("a", 5, 0), _op("a", 4, 1))
    with pytest.raises(HistoryOrderError, match="time_ns 4 after 5"):
        list(stream_history([path]))


def test_a_scan_names_torn_lines_and_tells_order_and_completions(tmp_path: Path) -> None:
    done = _op("a", 5, 1)._replace(type="ok")
    a = _write(tmp_path / "a.jsonl", _op("a", 1, 0), done, _op("a", 4, 2), tail='{"v":1,"ty')
    a.write_text("garbage\n" + a.read_text(encoding="utf-8"), encoding="utf-8")

    scan = scan_history_file(a)

    assert (scan.ops, scan.torn, scan.ordered) == (3, (1, 5), False)
    assert (scan.last_wall_ms, scan.completed) == (5, frozenset({"a"}))
    assert scan_history_file(tmp_path / "gone.jsonl").ops == 0
    bad = json.loads(_op("a", 1, 0).to_json()) | {"time_ns": "soon"}
    a.write_text(json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(HistoryFormatError, match=r"a\.jsonl"):
        scan_history_file(a)


@pytest.mark.parametrize("ordered", [True, False])
def test_history_files_read_again_give_read_history_each_time(
    tmp_path: Path, ordered: bool
) -> None:
    a = _write(tmp_path / "a.jsonl", _op("a", 1, 0), _op("a", 3, 1))
    b = _write(tmp_path / "b.jsonl", _op("b", 2, 0), *(() if ordered else (_op("b", 0, 1),)))
    files = HistoryFiles((a, b), 4, ordered=ordered)

    assert list(files) == list(files) == read_history([a, b])
    assert len(files) == 4
    assert _op("b", 2, 0) in files
