"""The failover benchmark's rows, built from figures as its measures return them: which
measures, which figure against which floor, and what the notes add. Pure; no process is
started."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.control import failover
from bench.control.floor import ReadSample, WriteSample
from bench.control.options import FAILOVER_COMMAND
from bench.control.populate import PopulateResult
from bench.control.rounds import AFTER_KILL, FIRST_ELECTION, RoundResult
from bench.control.timeline import FailoverTimeline
from bench.shared.arguments import parse_command
from bench.shared.report import Figure, Measure

READS = [ReadSample(0.01, 0.1, 0.4, 100, 1000), ReadSample(0.01, 0.1, 0.3, 100, 1000)]
WRITE = WriteSample(0.09, 1000, 1)


def _round(
    number: int, seconds: float, load_s: float, moved: int, kill_to_done_s: float | None = None
) -> RoundResult:
    timeline = FailoverTimeline(number, 0, 3, 1000, 0, moved, load_s, {}, {}, [])
    kind = FIRST_ELECTION if number == 1 else AFTER_KILL
    return RoundResult(
        number, kind, number, number, seconds, timeline, kill_to_done_s=kill_to_done_s
    )


def _failover_rows(tmp_path: Path, rounds: list[RoundResult]) -> dict[str, Measure]:
    settings = parse_command(
        FAILOVER_COMMAND,
        ["--partitions", "1000", "--rounds", str(len(rounds)), "--out", str(tmp_path)],
    )
    report = failover.report(settings, PopulateResult(1100, 2, 0.1), READS, [WRITE], rounds)
    return {m.measure: m for m in report.measures}


def test_failover_rows_compare_each_failover_with_the_best_read(tmp_path: Path) -> None:
    rounds = [
        _round(1, 0.8, 0.5, 0),
        _round(2, 1.6, 0.9, 333, kill_to_done_s=8.0),
        _round(3, 1.2, 0.7, 333, kill_to_done_s=7.0),
    ]
    rows = _failover_rows(tmp_path, rounds)
    assert list(rows) == [
        "controller_first_election",
        "controller_first_election_loading",
        "controller_failover",
        "controller_failover_loading",
    ]
    best_read = 0.41
    assert all(m.floor == pytest.approx(best_read) for m in rows.values())
    assert {m.kind for m in rows.values()} == {Figure.SECONDS}
    assert {m.partitions for m in rows.values()} == {1000}
    assert rows["controller_first_election"].figure == 0.8
    assert rows["controller_failover"].figure == pytest.approx(1.4)  # median of 1.6, 1.2
    assert rows["controller_failover_loading"].figure == pytest.approx(0.8)
    assert rows["controller_failover"].extra["kill_to_done_seconds"] == pytest.approx(7.5)
    assert rows["controller_failover"].extra["write_floor_seconds"] == pytest.approx(0.09)
    assert "best of 2 pipelined reloads of 1,100 znodes" in rows["controller_failover"].floor_phrase


def test_failover_notes_compare_each_round_with_read_plus_write(tmp_path: Path) -> None:
    settings = parse_command(FAILOVER_COMMAND, ["--partitions", "1000", "--out", str(tmp_path)])
    rounds = [_round(1, 1.0, 0.5, 0), _round(2, 2.0, 0.9, 333, kill_to_done_s=8.0)]
    report = failover.report(settings, PopulateResult(1100, 2, 0.1), READS, [WRITE], rounds)
    assert "vs read + write floor (0.50 s): round 1 2.0x, round 2 4.0x" in report.notes
    assert "kill -9 -> failover done (incl. 6 s session): 8.00 s" in report.notes


def test_one_round_has_no_failover_after_a_kill(tmp_path: Path) -> None:
    rows = _failover_rows(tmp_path, [_round(1, 0.8, 0.5, 0)])
    assert list(rows) == ["controller_first_election", "controller_first_election_loading"]
