"""Table cells of the report page: numbers, flags, lists and numpy values shown alike."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.report import table_cell


@pytest.mark.parametrize(
    ("value", "shown", "text", "bad"),
    [
        (1.25, "1.2", False, None),
        (float("nan"), "", False, None),
        (np.float64(6150.0), "6150.0", False, None),
        (7, "7", False, False),
        (np.int64(7), "7", False, False),
        (True, "true", True, False),
        (np.bool_(False), "false", True, True),
        (None, "", True, False),
        (np.array(["a", "b"]), "a, b", True, False),
        ([], "", True, False),
        ("kill", "kill", True, False),
    ],
)
def test_cells(value: object, shown: str, text: bool, bad: bool | None) -> None:
    cell = table_cell(value)
    assert cell["value"] == shown
    assert cell["text"] is text
    assert cell.get("bad") is bad
