"""The benchmarks' command line: defaults, every flag, both spellings of a run
(`python -m bench.failover` and `python -m bench failover`), and bad values that end with
exit code 2 and say what is wrong. No process is started."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.benchmarks import parse_settings
from bench.control.options import FAILOVER, FailoverOptions, cluster_layout
from bench.produce.options import PRODUCE, ProduceOptions
from bench.shared.settings import DEFAULT_RESULTS_DIR, Settings


def _parse(benchmark: str, *argv: str, out: Path) -> Settings[Any]:
    return parse_settings([*argv, "--out", str(out)], benchmark)


def test_failover_defaults(tmp_path: Path) -> None:
    settings = _parse(FAILOVER, out=tmp_path / "run")
    assert settings.benchmark == FAILOVER
    assert (settings.partitions, settings.brokers) == (10_000, 3)
    assert (settings.session_timeout_ms, settings.timeout_s) == (6000, 180.0)
    assert settings.out == (tmp_path / "run").resolve()
    assert settings.results_dir == DEFAULT_RESULTS_DIR
    assert settings.options == FailoverOptions(
        topics=100, rounds=2, floor_repetitions=3, write_floor=True
    )
    assert cluster_layout(settings).replication_factor == 3


def test_produce_defaults(tmp_path: Path) -> None:
    settings = _parse(PRODUCE, out=tmp_path / "run")
    assert (settings.partitions, settings.brokers, settings.timeout_s) == (3, 3, 120.0)
    options = settings.options_of(ProduceOptions)
    assert (options.replication_factor, options.producers) == (3, 4)
    assert (options.batch, options.value_bytes) == (100, 100)
    assert (options.duration_s, options.floor_s) == (10.0, 3.0)
    assert options.topic == "bench-produce"


def test_the_default_out_is_a_new_directory_under_runs() -> None:
    failover = parse_settings([], FAILOVER)
    produce = parse_settings([], PRODUCE)
    assert failover.out.parent.name == "runs"
    assert failover.out.name.startswith("bench-2")
    assert produce.out.name.startswith("bench-produce-")


@pytest.mark.parametrize(
    ("benchmark", "argv", "field", "value"),
    [
        (FAILOVER, ["--partitions", "1000"], "partitions", 1000),
        (FAILOVER, ["--brokers", "5"], "brokers", 5),
        (FAILOVER, ["--session-timeout-ms", "9000"], "session_timeout_ms", 9000),
        (FAILOVER, ["--timeout", "30"], "timeout_s", 30.0),
        (FAILOVER, ["--topics", "10"], "options.topics", 10),
        (FAILOVER, ["--rounds", "4"], "options.rounds", 4),
        (FAILOVER, ["--floor-repetitions", "1"], "options.floor_repetitions", 1),
        (FAILOVER, ["--no-write-floor"], "options.write_floor", False),
        (PRODUCE, ["--partitions", "6"], "partitions", 6),
        (PRODUCE, ["--brokers", "4"], "brokers", 4),
        (PRODUCE, ["--session-timeout-ms", "3000"], "session_timeout_ms", 3000),
        (PRODUCE, ["--timeout", "60"], "timeout_s", 60.0),
        (PRODUCE, ["--replication-factor", "2"], "options.replication_factor", 2),
        (PRODUCE, ["--duration", "5"], "options.duration_s", 5.0),
        (PRODUCE, ["--producers", "8"], "options.producers", 8),
        (PRODUCE, ["--batch", "10"], "options.batch", 10),
        (PRODUCE, ["--value-bytes", "0"], "options.value_bytes", 0),
        (PRODUCE, ["--floor-seconds", "1.5"], "options.floor_s", 1.5),
        (PRODUCE, ["--quick"], "options.duration_s", 3.0),
        (PRODUCE, ["--quick"], "options.floor_s", 2.0),
        (PRODUCE, ["--quick", "--duration", "7"], "options.duration_s", 7.0),
    ],
)
def test_each_flag_sets_its_field(
    benchmark: str, argv: list[str], field: str, value: Any, tmp_path: Path
) -> None:
    found: Any = _parse(benchmark, *argv, out=tmp_path / "run")
    for part in field.split("."):
        found = getattr(found, part)
    assert found == value


def test_results_flag_names_the_results_directory(tmp_path: Path) -> None:
    settings = _parse(FAILOVER, "--results", str(tmp_path / "r"), out=tmp_path / "run")
    assert settings.results_dir == (tmp_path / "r").resolve()


@pytest.mark.parametrize("benchmark", [FAILOVER, PRODUCE])
def test_the_subcommand_spelling_gives_the_same_settings(benchmark: str, tmp_path: Path) -> None:
    argv = ["--partitions", "1000", "--out", str(tmp_path / "run")]
    assert parse_settings([benchmark, *argv]) == parse_settings(argv, benchmark)


def test_options_of_another_benchmark_are_refused(tmp_path: Path) -> None:
    settings = _parse(PRODUCE, out=tmp_path / "run")
    with pytest.raises(TypeError, match="no FailoverOptions"):
        _ = settings.options_of(FailoverOptions)


@pytest.mark.parametrize(
    ("benchmark", "argv", "message"),
    [
        (FAILOVER, ["--rounds", "0"], "--rounds must be at least 1"),
        (FAILOVER, ["--brokers", "1"], "rounds after a kill need at least 2 brokers"),
        (FAILOVER, ["--floor-repetitions", "0"], "--floor-repetitions must be at least 1"),
        (FAILOVER, ["--partitions", "5", "--topics", "10"], "every topic needs a partition"),
        (FAILOVER, ["--topics", "0"], "need at least one topic"),
        (FAILOVER, ["--session-timeout-ms", "500"], "--session-timeout-ms must be within"),
        (FAILOVER, ["--timeout", "0"], "--timeout must be positive"),
        (FAILOVER, ["--partitions", "many"], "invalid int value: 'many'"),
        (FAILOVER, ["--quick"], "unrecognized arguments: --quick"),
        (PRODUCE, ["--rounds", "2"], "unrecognized arguments: --rounds 2"),
        (PRODUCE, ["--brokers", "0"], "--brokers must be at least 1"),
        (PRODUCE, ["--partitions", "0"], "--partitions must be at least 1"),
        (PRODUCE, ["--replication-factor", "4"], "--replication-factor must be within"),
        (PRODUCE, ["--duration", "0"], "--duration must be within"),
        (PRODUCE, ["--floor-seconds", "601"], "--floor-seconds must be within"),
        (PRODUCE, ["--producers", "65"], "--producers must be within 1..64"),
        (PRODUCE, ["--batch", "0"], "--batch must be at least 1"),
        (PRODUCE, ["--value-bytes", "-1"], "--value-bytes must not be negative"),
        (PRODUCE, ["--batch", "100000", "--value-bytes", "1000"], "must stay below"),
    ],
)
def test_bad_arguments_exit_2_and_say_what_is_wrong(
    benchmark: str,
    argv: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        _parse(benchmark, *argv, out=tmp_path / "run")
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"python -m bench.{benchmark}: error: " in err
    assert message in err


def test_an_out_directory_holding_a_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bench.json").write_text("{}")
    with pytest.raises(SystemExit) as exited:
        parse_settings(["failover", "--out", str(tmp_path)])
    assert exited.value.code == 2
    assert "python -m bench failover: error: " in capsys.readouterr().err


@pytest.mark.parametrize("argv", [[], ["latency"]])
def test_the_subcommand_form_needs_a_known_benchmark(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_settings(argv)
    assert exited.value.code == 2
    assert "python -m bench: error: " in capsys.readouterr().err
