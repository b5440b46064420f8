"""The sparse offset index: when entries are due, parsing its file, and lookups."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from broker_node.storage.offset_index import OffsetIndex, index_entry_due, parse_index


@pytest.mark.parametrize(
    ("position", "last_indexed", "interval", "due"),
    [
        pytest.param(0, 0, 0, False, id="segment-start-is-never-indexed"),
        pytest.param(100, 0, 0, True, id="interval-0-indexes-every-later-record"),
        pytest.param(4096, 0, 4096, False, id="exactly-one-interval-is-not-past-it"),
        pytest.param(4097, 0, 4096, True, id="past-one-interval"),
        pytest.param(5000, 4097, 4096, False, id="measured-from-the-last-entry"),
    ],
)
def test_an_entry_is_due_past_the_interval(
    position: int, last_indexed: int, interval: int, due: bool
) -> None:
    assert index_entry_due(position, last_indexed, interval) is due


def pack(*entries: tuple[int, int]) -> bytes:
    return b"".join(struct.pack(">II", rel, pos) for rel, pos in entries)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"", [], id="empty"),
        pytest.param(pack((3, 120), (9, 300)), [(103, 120), (109, 300)], id="well-formed"),
        pytest.param(pack((3, 120)) + b"\x00", None, id="partial-entry"),
        pytest.param(pack((3, 120), (3, 300)), None, id="repeated-offset"),
        pytest.param(pack((3, 120), (9, 120)), None, id="repeated-position"),
        pytest.param(pack((9, 120), (3, 300)), None, id="descending-offsets"),
    ],
)
def test_parse_index(data: bytes, expected: list[tuple[int, int]] | None) -> None:
    assert parse_index(data, 100) == expected


def test_lookup_finds_the_last_entry_at_or_before_the_offset(tmp_path: Path) -> None:
    index = OffsetIndex(tmp_path / "x.index", 100, [(110, 500), (120, 1000)])
    assert index.lookup(100) == (100, 0)
    assert index.lookup(109) == (100, 0)
    assert index.lookup(110) == (110, 500)
    assert index.lookup(119) == (110, 500)
    assert index.lookup(500) == (120, 1000)


def test_appends_and_truncation_are_mirrored_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x.index"
    index = OffsetIndex(path, 100)
    index.append([(105, 200), (110, 400)])
    index.append([(115, 600)])
    assert parse_index(path.read_bytes(), 100) == [(105, 200), (110, 400), (115, 600)]
    index.truncate_to(110)
    assert index.entries == [(105, 200)]
    assert parse_index(path.read_bytes(), 100) == [(105, 200)]
    index.append([(111, 450)])
    index.close()
    assert parse_index(path.read_bytes(), 100) == [(105, 200), (111, 450)]


def test_an_entry_beyond_u32_is_refused(tmp_path: Path) -> None:
    index = OffsetIndex(tmp_path / "x.index", 0)
    with pytest.raises(ValueError, match="u32"):
        index.append([(2**32, 10)])
