"""Each benchmark's rows, built from figures as its measures return them: which measures,
which figure against which floor, and what the notes add. Pure; no process is started."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import failover, produce
from bench.arguments import parse_settings
from bench.floor import ReadSample, WriteSample
from bench.phases import Phase, Phases
from bench.populate import PopulateResult
from bench.report import Figure, Measure
from bench.rounds import AFTER_KILL, FIRST_ELECTION, RoundResult
from bench.rpc_load import LoadResult
from bench.timeline import FailoverTimeline
from bench.usage import CpuUsage

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
    settings = parse_settings(
        ["--partitions", "1000", "--rounds", str(len(rounds)), "--out", str(tmp_path)], "failover"
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
    settings = parse_settings(["--partitions", "1000", "--out", str(tmp_path)], "failover")
    rounds = [_round(1, 1.0, 0.5, 0), _round(2, 2.0, 0.9, 333, kill_to_done_s=8.0)]
    report = failover.report(settings, PopulateResult(1100, 2, 0.1), READS, [WRITE], rounds)
    assert "vs read + write floor (0.50 s): round 1 2.0x, round 2 4.0x" in report.notes
    assert "kill -9 -> failover done (incl. 6 s session): 8.00 s" in report.notes


def test_one_round_has_no_failover_after_a_kill(tmp_path: Path) -> None:
    rows = _failover_rows(tmp_path, [_round(1, 0.8, 0.5, 0)])
    assert list(rows) == ["controller_first_election", "controller_first_election_loading"]


def _phase(key: str, threads: int, ok: int, units: int, p50_s: float) -> Phase:
    load = LoadResult(threads, 2.0, ok, 0, units, {}, p50_s, 2 * p50_s, p50_s, 3 * p50_s, 0, 2)
    cpu = CpuUsage({"bench": 1.0, "broker1": 1.0}, 3.0, 4.0)
    return Phase(key, key, load, cpu, {})


def test_produce_rows_compare_batches_with_rpcs_and_latency_with_one_round_trip(
    tmp_path: Path,
) -> None:
    settings = parse_settings(["--quick", "--out", str(tmp_path)], "produce")
    phases = Phases(
        _phase("metadata_sequential", 1, 2000, 2000, 0.0005),
        _phase("metadata_concurrent", 4, 4000, 4000, 0.002),
        _phase("acks_all", 4, 200, 20_000, 0.03),
        _phase("acks_1", 4, 300, 30_000, 0.02),
    )
    report = produce.report(settings, phases, {"floor_broker": 1})
    rows = {m.measure: m for m in report.measures}
    assert list(rows) == [
        "produce_acks_all",
        "produce_acks_all_p50",
        "produce_acks_1",
        "produce_acks_1_p50",
    ]
    acks_all = rows["produce_acks_all"]
    assert acks_all.kind is Figure.PER_SECOND
    assert (acks_all.figure, acks_all.floor) == (100.0, 2000.0)  # batches/s, RPC/s
    assert acks_all.ratio == pytest.approx(0.05)
    assert acks_all.extra["records_per_second"] == 10_000.0
    assert acks_all.partitions == 3
    latency = rows["produce_acks_1_p50"]
    assert latency.kind is Figure.SECONDS
    assert (latency.figure, latency.floor) == (0.02, 0.0005)
    assert latency.ratio == pytest.approx(40.0)
    assert report.details["summary"]["acks_all_x_acks_1_throughput"] == pytest.approx(0.667)
