"""docs/kafka-differences.md names what keeps each row true: every row of its tables names
at least one existing test file (`tests/...py` or a `test_*.py` found under tests/), with
`::name` a test function defined in it, or an existing docs page (a Markdown link); and
each default the Defaults table gives for a broker option is that option's default, under
the `kafka` profile (the broker's own) and the `fast` one, and every option a profile sets
has a row."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from broker_node.options import build_parser
from domain.profiles import FAST, KAFKA, SETTINGS, resolve

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
PAGE = DOCS / "kafka-differences.md"

_CODE = re.compile(r"`([^`]+)`")
_TEST_REF = re.compile(r"^((?:tests/)?(?:[\w.-]+/)*test_\w+\.py)(?:::(\w+))?$")
_LINK = re.compile(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)")
_SEPARATOR = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+\s*$")
_FLAG = re.compile(r"`(--[a-z0-9-]+)`")


@dataclass(frozen=True)
class Row:
    """One data row of a table of the page: its header, cells and line number."""

    header: tuple[str, ...]
    cells: tuple[str, ...]
    line: int

    @property
    def name(self) -> str:
        """The row's first cell, as the failures name it."""
        return self.cells[0]

    def cell(self, column: str) -> str:
        """The cell under `column` of the header."""
        return self.cells[self.header.index(column)]


def _split(line: str) -> tuple[str, ...]:
    return tuple(cell.strip() for cell in line.strip().strip("|").split(" | "))


def table_rows(text: str) -> list[Row]:
    """Every data row of every table in `text` (a table: a header line, a separator
    line, then lines starting with `|`)."""
    lines = text.splitlines()
    rows: list[Row] = []
    header: tuple[str, ...] | None = None
    for number, line in enumerate(lines, start=1):
        if not line.startswith("|"):
            header = None
        elif _SEPARATOR.match(line):
            header = _split(lines[number - 2])
        elif header is not None:
            rows.append(Row(header, _split(line), number))
    return rows


def missing_references(row: Row) -> list[str]:
    """What the row names that does not exist; `["nothing"]` when it names nothing."""
    text = " | ".join(row.cells)
    found = 0
    missing: list[str] = []
    for code in _CODE.findall(text):
        match = _TEST_REF.match(code)
        if match is None:
            continue
        found += 1
        path, function = match.group(1), match.group(2)
        files = (
            [ROOT / path] if path.startswith("tests/") else sorted(ROOT.glob(f"tests/**/{path}"))
        )
        files = [file for file in files if file.is_file()]
        if not files:
            missing.append(path)
        elif function is not None and not any(
            re.search(rf"^(async )?def {function}\(", file.read_text(), re.MULTILINE)
            for file in files
        ):
            missing.append(f"{path}::{function}")
    for link in _LINK.findall(text):
        found += 1
        if not (DOCS / link).is_file():
            missing.append(link)
    return missing if found else ["nothing"]


ROWS = table_rows(PAGE.read_text())


def test_the_page_has_the_tables() -> None:
    headers = {row.header[0] for row in ROWS}
    assert {"area", "file", "Kafka's name"} <= headers


@pytest.mark.parametrize("row", ROWS, ids=[f"line{row.line}" for row in ROWS])
def test_every_row_names_an_existing_test_or_doc(row: Row) -> None:
    assert missing_references(row) == [], f"row {row.name!r} (line {row.line})"


def test_a_row_naming_nothing_or_something_missing_fails() -> None:
    rows = table_rows(
        "| area | x |\n| --- | --- |\n"
        "| plain | no reference |\n"
        "| gone | `tests/unit/test_no_such_module.py` |\n"
        "| absent function | `test_kafka_differences.py::test_no_such_thing` |\n"
        "| good | `test_kafka_differences.py::test_the_page_has_the_tables` |\n"
        "| doc | [runs](runs.md) and [none](no-such-page.md) |\n"
    )
    assert [(row.name, missing_references(row)) for row in rows] == [
        ("plain", ["nothing"]),
        ("gone", ["tests/unit/test_no_such_module.py"]),
        ("absent function", ["test_kafka_differences.py::test_no_such_thing"]),
        ("good", []),
        ("doc", ["no-such-page.md"]),
    ]


DEFAULTS = [row for row in ROWS if row.header[0] == "Kafka's name"]


def _defaults(profile: str) -> dict[str, str | None]:
    """Flag -> a broker's default under `profile`: the profile's value for the options a
    profile chooses, the parser's default for the others."""
    parser = build_parser({})
    found: dict[str, str | None] = {
        action.option_strings[0]: action.default
        for action in parser._actions
        if action.option_strings and action.option_strings[0].startswith("--")
    }
    return {**found, **resolve(profile, {})}


_FLAG_ROWS = [row for row in DEFAULTS if _FLAG.search(row.cell("where this project sets it"))]


@pytest.mark.parametrize(
    ("row", "column", "profile"),
    [
        pytest.param(row, column, profile, id=f"{row.name.strip('`')}-{profile}")
        for row in _FLAG_ROWS
        for column, profile in (("this project", KAFKA), ("fast profile", FAST))
    ],
)
def test_a_defaults_row_gives_the_options_default(row: Row, column: str, profile: str) -> None:
    flag = _FLAG.search(row.cell("where this project sets it"))
    assert flag is not None
    default = _defaults(profile).get(flag.group(1))
    values = _CODE.findall(row.cell(column))
    assert values, f"row {row.name!r} gives no value in backticks under {column!r}"
    assert values[0] == default, f"row {row.name!r}: {flag.group(1)} is {default} in {profile}"


def test_the_defaults_table_covers_every_setting_of_the_profiles() -> None:
    named = {match for row in _FLAG_ROWS for match in _FLAG.findall(" ".join(row.cells))}
    assert {item.flag for item in SETTINGS} <= named
