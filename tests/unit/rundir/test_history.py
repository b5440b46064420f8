"""`HistoryWriter` and `read_history`: one JSON line per op, read back whole; torn lines are
skipped, schema breaks are rejected, a reopened file continues its op ids. Files live under
`tmp_path`."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chaos.testing import FakeClock
from rundir.history import (
    SCHEMA_VERSION,
    HistoryFormatError,
    HistoryOp,
    _checked,
    history_files,
    history_path,
    read_history,
)
from rundir.history_writer import HistoryWriter

PROPERTY = settings(max_examples=100, deadline=None)


def _writer(
    path: Path, process: str = "producer-0", clock: FakeClock | None = None
) -> HistoryWriter:
    clock = clock or FakeClock()
    return HistoryWriter(path, process, clock_ns=clock.monotonic_ns, wall_ms=clock.wall_ms)


def test_invoke_and_completion_round_trip(tmp_path: Path) -> None:
    path = history_path(tmp_path, "producer-0")
    with _writer(path) as w:
        send = w.invoke("send", "t", 2, value="producer-0-0", acks=-1)
        ok = w.complete(send, "ok", offset=7, attempts=2, attempts_unknown=1)
        poll = w.invoke("poll", "t", 2, offset=0)
        polled = w.complete(poll, "ok", offset=8, attempts=1, records=((7, "producer-0-0"),))

    assert read_history([path]) == [send, ok, poll, polled]
    assert (ok.op_id, ok.value, ok.acks, ok.partition) == (send.op_id, "producer-0-0", -1, 2)
    assert polled.op_id == poll.op_id != send.op_id
    assert send.time_ns < ok.time_ns < poll.time_ns < polled.time_ns


def test_every_field_is_written_with_explicit_nulls(tmp_path: Path) -> None:
    path = tmp_path / "consumer.jsonl"
    with _writer(path, "consumer") as w:
        w.invoke("poll", "t", 0, offset=3)
    (line,) = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(line)
    assert record["v"] == SCHEMA_VERSION == 1
    assert set(record) == {
        "v",
        "type",
        "f",
        "process",
        "op_id",
        "time_ns",
        "wall_ms",
        "topic",
        "partition",
        "offset",
        "value",
        "error",
        "acks",
        "attempts",
        "attempts_unknown",
        "records",
    }
    assert record["value"] is None
    assert record["records"] is None
    assert record["offset"] == 3
    assert ", " not in line


def test_a_torn_last_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "producer-0.jsonl"
    with _writer(path) as w:
        op = w.invoke("send", "t", 0, value="v0", acks=-1)
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"v":1,"type":"ok","f":"send","proc')

    assert read_history([path]) == [op]


def test_a_reopened_file_heals_the_torn_line_and_continues_op_ids(tmp_path: Path) -> None:
    path = tmp_path / "producer-0.jsonl"
    clock = FakeClock()
    with _writer(path, clock=clock) as w:
        first = w.invoke("send", "t", 0, value="v0", acks=-1)
        w.invoke("send", "t", 0, value="v1", acks=-1)
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"v":1,"ty')

    with _writer(path, clock=clock) as w:
        again = w.invoke("send", "t", 0, value="v2", acks=-1)

    assert again.op_id == 2
    assert [op.value for op in read_history([path])] == ["v0", "v1", "v2"]
    assert first.op_id == 0


def test_a_line_that_breaks_the_schema_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"v":1,"type":"maybe","f":"send"}\n', encoding="utf-8")
    with pytest.raises(HistoryFormatError, match="bad type"):
        read_history([path])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"v": 2}, "unsupported history version"),
        ({"partition": "0"}, "partition must be an int"),
        ({"offset": True}, "offset must be an int"),
        ({"records": [[1]]}, "a record must be"),
        ({"records": "x"}, "records must be a list"),
        ({"value": 5}, "value must be a string"),
        ({"type": []}, "bad type/f"),  # not hashable: still a schema break, not a crash
        ({"f": {"send": 1}}, "bad type/f"),
    ],
)
def test_each_schema_break_is_named(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    record = json.loads(HistoryOp("ok", "poll", "c", 1, 1, "t", 0, 3, None, None, 0).to_json())
    record.update(change)
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(HistoryFormatError, match=message):
        read_history([path])


def test_files_are_merged_by_time_and_missing_files_are_empty(tmp_path: Path) -> None:
    clock = FakeClock()
    a = HistoryWriter(tmp_path / "a.jsonl", "a", clock_ns=clock.monotonic_ns)
    b = HistoryWriter(tmp_path / "b.jsonl", "b", clock_ns=clock.monotonic_ns)
    ops = [a.invoke("send", "t", 0, value="a0"), b.invoke("send", "t", 0, value="b0")]
    ops.append(a.invoke("send", "t", 0, value="a1"))
    a.close()
    b.close()

    merged = read_history([tmp_path / "b.jsonl", tmp_path / "a.jsonl", tmp_path / "gone.jsonl"])
    assert merged == ops
    assert history_files(tmp_path) == [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]


def test_concurrent_writers_never_interleave_lines(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    writer = HistoryWriter(path, "shared")
    start = threading.Barrier(4)

    def write() -> None:
        start.wait()
        for i in range(200):
            writer.invoke("send", "t", 0, value=f"{threading.get_ident()}-{i}")

    threads = [threading.Thread(target=write) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.close()

    ops = read_history([path])
    assert len(ops) == 800
    assert sorted(op.op_id for op in ops) == list(range(800))
    assert writer.counts() == {("send", "invoke"): 800}


def test_a_writer_without_a_path_only_counts(tmp_path: Path) -> None:
    w = HistoryWriter(None, "dry")
    w.complete(w.invoke("send", "t", 0, value="x"), "fail", error="NOT_ENOUGH_REPLICAS")
    assert w.counts() == {("send", "invoke"): 1, ("send", "fail"): 1}
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["", "a/b", "../x", "p q"])
def test_process_names_are_file_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="process name"):
        history_path(tmp_path, name)
    with pytest.raises(ValueError, match="process name"):
        HistoryWriter(None, name)


texts = st.text(min_size=0, max_size=20)
ints = st.integers(min_value=-(2**62), max_value=2**62)
ops = st.builds(
    HistoryOp,
    type=st.sampled_from(["invoke", "ok", "fail", "info"]),
    f=st.sampled_from(["send", "poll"]),
    process=st.from_regex(r"[a-z0-9-]{1,8}", fullmatch=True),
    time_ns=ints,
    wall_ms=ints,
    topic=texts,
    partition=st.integers(0, 1000),
    offset=st.none() | ints,
    value=st.none() | texts,
    error=st.none() | texts,
    op_id=st.integers(0, 2**40),
    acks=st.none() | st.sampled_from([-1, 0, 1]),
    attempts=st.integers(0, 10),
    attempts_unknown=st.integers(0, 10),
    records=st.none() | st.lists(st.tuples(ints, texts), max_size=5).map(tuple),
)


@PROPERTY
@given(op=ops)
def test_any_op_survives_the_json_codec(op: HistoryOp) -> None:
    assert HistoryOp.from_json(json.loads(op.to_json())) == op


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=False)
    | st.text(max_size=4)
    | st.sampled_from(["invoke", "ok", "send", "poll"]),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=6,
)


@PROPERTY
@given(
    op=ops,
    changes=st.dictionaries(
        st.sampled_from([*HistoryOp._fields, "v", "extra"]), json_values, max_size=3
    ),
    dropped=st.sets(st.sampled_from(HistoryOp._fields), max_size=2),
)
def test_any_line_is_decoded_as_field_by_field_decoding_decodes_it(
    op: HistoryOp, changes: dict[str, object], dropped: set[str]
) -> None:
    record = json.loads(op.to_json()) | changes
    for name in dropped:
        record.pop(name, None)

    def outcome(decode: Callable[[], HistoryOp]) -> HistoryOp | str:
        try:
            return decode()
        except HistoryFormatError as exc:
            return f"HistoryFormatError: {exc}"

    assert outcome(lambda: HistoryOp.from_json(record)) == outcome(
        lambda: _checked(HistoryOp, record)
    )
