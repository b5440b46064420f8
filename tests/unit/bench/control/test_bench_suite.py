"""`make bench`'s suite without starting anything: its command line, when a change counts
as applied (from event logs written here), results of one `make bench` kept together in
`latest.jsonl`, the picture, and the floors a change is compared with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.benchmarks import parse_settings
from bench.control.applied import applied_window
from bench.control.floor import Floors, ReadSample
from bench.control.options import SUITE, SuiteOptions
from bench.shared.plot import plot_results, x_axis
from bench.shared.profiling import LONG_RATE_HZ, RATE_HZ, rate_for
from bench.shared.report import LATEST, read_results, write_results


def test_the_suite_measures_1k_and_10k_and_partitions_adds_a_size(tmp_path: Path) -> None:
    default = parse_settings(["--out", str(tmp_path / "a")], SUITE)
    assert default.options.sizes == (1_000, 10_000)
    assert default.partitions == 10_000
    assert default.options.produce is not None
    assert default.options.profile
    bigger = parse_settings(["--partitions", "100000", "--out", str(tmp_path / "b")], SUITE)
    assert bigger.options.sizes == (1_000, 10_000, 100_000)
    assert bigger.partitions == 100_000


def test_quick_no_produce_and_no_profile(tmp_path: Path) -> None:
    settings = parse_settings(
        ["all", "--quick", "--no-produce", "--no-profile", "--out", str(tmp_path / "q")]
    )
    assert settings.options.sizes == (1_000,)
    assert settings.options.scenario_partitions == 1_000
    assert settings.options.produce is None
    assert not settings.options.profile


def test_the_controller_measures_run_three_times_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The failovers up to 10,000 partitions, broker failure and controlled shutdown run
    three times each by default (the median is reported), once with --quick, --runs in
    [1, 9] otherwise."""
    assert parse_settings(["--out", str(tmp_path / "a")], SUITE).options.runs == 3
    quick = parse_settings(["--quick", "--out", str(tmp_path / "q")], SUITE)
    assert quick.options.runs == 1
    five = parse_settings(["--runs", "5", "--out", str(tmp_path / "f")], SUITE)
    assert five.options.runs == 5
    with pytest.raises(SystemExit) as exited:
        parse_settings(["--runs", "0", "--out", str(tmp_path / "z")], SUITE)
    assert exited.value.code == 2
    assert "--runs must be in [1, 9]" in capsys.readouterr().err


def test_the_suite_needs_three_brokers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_settings(["--brokers", "2", "--out", str(tmp_path / "x")], SUITE)
    assert exited.value.code == 2
    assert "at least 3 brokers" in capsys.readouterr().err


def _log(path: Path, *events: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def test_a_change_is_applied_when_the_last_broker_accepted_its_last_request(
    tmp_path: Path,
) -> None:
    controller = _log(
        tmp_path / "b1.jsonl",
        {"ts": 900, "kind": "leader_elected", "controller_epoch": 2},  # before the window
        {"ts": 1000, "kind": "leader_elected", "controller_epoch": 3},
        {"ts": 1001, "kind": "isr_changed", "by": "controller"},
        {"ts": 1002, "kind": "isr_changed", "by": "leader"},
        {"ts": 1100, "kind": "request_accepted", "controller_epoch": 3},
    )
    other = _log(
        tmp_path / "b2.jsonl",
        {"ts": 1300, "kind": "request_accepted", "controller_epoch": 3},
        {"ts": 1400, "kind": "request_accepted", "controller_epoch": 2},  # a stale epoch
        {"ts": 9000, "kind": "request_accepted", "controller_epoch": 3},  # after the bound
    )
    window = applied_window({1: controller, 2: other}, 1, 3, 950, 5000)
    assert window.seconds == pytest.approx(0.35)
    assert (window.leaders_elected, window.isr_shrinks, window.states_written) == (1, 1, 2)
    assert window.requests_accepted == 2
    assert applied_window({1: controller, 2: other}, 1, None, 950, 5000).last_accepted_ts == 1400


def test_nothing_accepted_means_no_figure(tmp_path: Path) -> None:
    log = _log(tmp_path / "b1.jsonl", {"ts": 1000, "kind": "leader_elected"})
    assert applied_window({1: log}, 1, 1, 0, 2000).seconds is None


def test_benchmarks_of_one_run_id_share_latest_and_a_new_run_replaces_it(tmp_path: Path) -> None:
    write_results(tmp_path, [{"measure": "a", "run_id": "r1"}], "s1", "r1")
    write_results(tmp_path, [{"measure": "b", "run_id": "r1"}], "s2", "r1")
    assert [line["measure"] for line in read_results(tmp_path / LATEST)] == ["a", "b"]
    write_results(tmp_path, [{"measure": "c", "run_id": "r2"}], "s3", "r2")
    assert [line["measure"] for line in read_results(tmp_path / LATEST)] == ["c"]
    write_results(tmp_path, [{"measure": "d", "run_id": None}], "s4", None)
    assert [line["measure"] for line in read_results(tmp_path / LATEST)] == ["d"]


def test_the_picture_has_each_cost_against_partitions(tmp_path: Path) -> None:
    lines = [
        {"measure": "controller_failover", "partitions": n, "seconds": s, "floor_seconds": f}
        for n, s, f in ((1_000, 0.5, 0.3), (10_000, 3.0, 2.0))
    ] + [
        {
            "measure": "produce_acks_all",
            "partitions": 3,
            "per_second": 300.0,
            "floor_per_second": 900.0,
        },
        {
            "measure": "produce_acks_all_p50",
            "partitions": 3,
            "seconds": 0.01,
            "floor_seconds": 0.001,
        },
    ]
    picture = plot_results(lines, tmp_path / "p.png")
    assert picture is not None
    assert picture.read_bytes()[:4] == b"\x89PNG"
    assert plot_results([], tmp_path / "none.png") is None


def test_a_change_floor_adds_the_reload_its_writes_and_one_round_trip() -> None:
    floors = Floors(ReadSample(0.0, 0.1, 0.9, 10, 1000), 0.5, 1000, 0.02)
    assert floors.write_of(500) == pytest.approx(0.25)
    assert floors.of(reload=True, states=2000) == pytest.approx(1.0 + 1.0 + 0.02)
    assert floors.of(reload=False, states=0) == pytest.approx(0.02)
    assert "pipelined read of 1,010 znodes" in floors.phrase(reload=True, states=2000)
    assert SuiteOptions().scenario_partitions == 10_000


def test_the_pipeline_is_drawn_against_records_and_the_rest_against_partitions() -> None:
    pipeline = [{"measure": "pipeline", "partitions": 3_300, "events": 1_000_000}]
    failover = [{"measure": "controller_failover", "partitions": 1_000}]
    assert x_axis(pipeline) == ("events", "records")
    assert x_axis(failover) == ("partitions", "partitions")
    assert x_axis(pipeline + failover) == ("partitions", "partitions")


def test_long_measures_are_sampled_less_often() -> None:
    """A measure above 10,000 partitions lasts tens of seconds: its samplers take 5 Hz, so
    that they lengthen it less, while shorter measures keep 20 Hz."""
    assert rate_for(1_000) == rate_for(10_000) == RATE_HZ == 20
    assert rate_for(100_000) == LONG_RATE_HZ == 5
