"""Every test module's file name is unique across the tiers: the tiers have no
`__init__.py`, so pytest imports each test module by its file name, and two files of one
name stop the collection of the whole `make test` run (a tier run alone still passes)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]


def test_the_tiers_have_test_modules() -> None:
    assert {p.parent.name for p in TESTS.glob("*/test_*.py")} >= {"integration", "docker"}


def test_no_two_test_modules_share_a_file_name() -> None:
    names = Counter(path.name for path in TESTS.rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []
