"""`stream_history` reads what `read_history` reads, in its order, one line at a time: torn
lines skipped, ties kept in file order (earlier files first), missing files empty, the
same error for a line that breaks the schema, and `HistoryOrderError` for a file that
goes back in time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rundir.history import HistoryFormatError, HistoryOp, read_history
from rundir.history_stream import HistoryOrderError, stream_history


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
