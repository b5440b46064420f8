"""The checker benchmark's command line and its phases: sizes, output, bad values that end
with exit code 2, and what a phase reports over a small history."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.checker.generator import write_history
from bench.checker.options import (
    CHECKER_OPERATIONS,
    PARTITIONS,
    QUICK_OPERATIONS,
    QUICK_SHORT_OPERATIONS,
    SHORT_OPERATIONS,
    parse_checker_settings,
)
from bench.checker.phase import CHECK, DECODE, main, run_phase
from bench.shared.settings import DEFAULT_RESULTS_DIR


def test_a_million_operations_by_default_and_a_tenth_when_quick(tmp_path: Path) -> None:
    full = parse_checker_settings(["--out", str(tmp_path / "a")])
    assert (full.operations, full.short_operations) == (CHECKER_OPERATIONS, SHORT_OPERATIONS)
    assert (full.operations, full.short_operations) == (1_000_000, 250_000)
    assert (full.partitions, full.seed, full.keep_histories) == (PARTITIONS, 0, False)
    assert full.out == (tmp_path / "a").resolve()
    assert full.results_dir == DEFAULT_RESULTS_DIR
    quick = parse_checker_settings(["--quick", "--out", str(tmp_path / "b")])
    assert (quick.operations, quick.short_operations) == (
        QUICK_OPERATIONS,
        QUICK_SHORT_OPERATIONS,
    )


def test_every_flag(tmp_path: Path) -> None:
    settings = parse_checker_settings(
        [
            "--operations",
            "50000",
            "--short-operations",
            "20000",
            "--partitions",
            "10",
            "--producers",
            "2",
            "--seed",
            "7",
            "--out",
            str(tmp_path / "o"),
            "--results",
            str(tmp_path / "r"),
            "--keep-histories",
        ]
    )
    assert (settings.operations, settings.short_operations) == (50_000, 20_000)
    assert (settings.partitions, settings.producers, settings.seed) == (10, 2, 7)
    assert settings.results_dir == (tmp_path / "r").resolve()
    assert settings.keep_histories


@pytest.mark.parametrize(
    "argv",
    [
        ["--operations", "10"],
        ["--operations", "x"],
        ["--operations", "20000", "--short-operations", "20000"],
        ["--partitions", "0"],
        ["--producers", "0"],
    ],
)
def test_bad_values_exit_2(tmp_path: Path, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        parse_checker_settings([*argv, "--out", str(tmp_path / "o")])
    assert raised.value.code == 2


def test_an_out_directory_that_holds_histories_is_refused(tmp_path: Path) -> None:
    (tmp_path / "o" / "histories").mkdir(parents=True)
    with pytest.raises(SystemExit) as raised:
        parse_checker_settings(["--out", str(tmp_path / "o")])
    assert raised.value.code == 2


def test_a_phase_decodes_or_checks_every_line_and_reports_its_memory(tmp_path: Path) -> None:
    made = write_history(tmp_path / "h", 4_000, seed=2)
    decoded = run_phase(DECODE, made.paths)
    checked = run_phase(CHECK, made.paths)
    assert decoded.lines == checked.lines == made.operations
    assert decoded.verdict_ok is None
    assert checked.verdict_ok is True
    assert checked.violations == 0
    assert len(checked.steps) == len(decoded.steps) == 1  # judged as read: one step
    assert 0 < checked.baseline_kib <= checked.peak_kib


def test_a_phase_run_as_a_command_writes_its_result(tmp_path: Path) -> None:
    made = write_history(tmp_path / "h", 2_000, seed=2)
    result = tmp_path / "phase.json"
    assert main([DECODE, str(result), *map(str, made.paths)]) == 0
    assert f'"lines": {made.operations}' in result.read_text()
    assert main(["sort", str(result)]) == 2
