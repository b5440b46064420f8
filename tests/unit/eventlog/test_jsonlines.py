"""`eventlog.jsonlines`: whole lines under concurrency, repair of a torn file, and a reader
that skips what a killed writer left half written."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from eventlog.jsonlines import JsonLinesWriter, read_json_lines, read_numbered_json_lines


def test_lines_from_concurrent_threads_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "log.jsonl"
    writer = JsonLinesWriter(path)
    payload = "x" * 2000

    def write(thread: int) -> None:
        for i in range(200):
            writer.append(json.dumps({"t": thread, "i": i, "p": payload}))

    threads = [threading.Thread(target=write, args=(t,), name=f"writer-{t}") for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    writer.close()
    values = [value for _, value in read_json_lines(path)]
    assert len(values) == 800
    assert path.read_text().count("\n") == 800
    for t in range(4):
        assert [v["i"] for v in values if v["t"] == t] == list(range(200))  # type: ignore[index]


def test_a_torn_last_line_is_skipped_and_the_next_line_starts_fresh(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"a":1}\n{"b":')
    writer = JsonLinesWriter(path)
    writer.append('{"c":3}')
    writer.close()
    assert [value for _, value in read_json_lines(path)] == [{"a": 1}, {"c": 3}]


def test_the_reader_returns_each_line_with_its_value(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"a":1}\n[2]\n')
    assert list(read_json_lines(path)) == [('{"a":1}\n', {"a": 1}), ("[2]\n", [2])]


def test_a_missing_file_has_no_lines(tmp_path: Path) -> None:
    assert list(read_json_lines(tmp_path / "absent.jsonl")) == []


def test_without_a_path_nothing_is_kept(tmp_path: Path) -> None:
    writer = JsonLinesWriter(None)
    writer.append('{"a":1}')
    writer.close()
    assert writer.path is None
    assert list(tmp_path.iterdir()) == []


def test_lines_after_close_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    writer = JsonLinesWriter(path)
    writer.append('{"a":1}')
    writer.close()
    writer.append('{"b":2}')
    assert [value for _, value in read_json_lines(path)] == [{"a": 1}]


def test_lines_the_fast_decoder_refuses_are_decoded_as_the_standard_library_decodes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "log.jsonl"
    huge = 2**70
    path.write_bytes(
        b'{"a":NaN}\n'
        + f'{{"b":{huge}}}\n'.encode()
        + b'{"c":"caf\xe9"}\n'
        + b"not json\n"
        + b'{"d":[1,2.5,null,true]}\n'
    )
    numbered = list(read_numbered_json_lines(path))
    assert [n for n, _, _ in numbered] == [1, 2, 3, 5]
    nan = numbered[0][2]["a"]  # type: ignore[index]
    assert nan != nan
    assert numbered[1][2] == {"b": huge}
    assert numbered[2][2] == {"c": "caf\ufffd"}
    assert numbered[2][1] == '{"c":"caf\ufffd"}\n'
    assert numbered[3][2] == {"d": [1, 2.5, None, True]}
