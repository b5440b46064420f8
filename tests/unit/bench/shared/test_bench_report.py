"""The one report of every benchmark: ratios, the table, `bench.json`, and the JSON lines
written to `latest.jsonl` and a dated copy. Files live under `tmp_path`."""

from __future__ import annotations

import json
import math
import socket
from pathlib import Path

import pytest

from bench.shared.machine import cpu_model, machine
from bench.shared.report import (
    LATEST,
    Figure,
    Measure,
    Report,
    bench_json,
    format_figure,
    median_of,
    ratio,
    render_table,
    result_lines,
    write_results,
)

FAILOVER_ROW = Measure(
    "controller_failover",
    "failover after kill -9",
    1000,
    figure=1.5,
    floor=0.5,
    floor_phrase="best of 3 pipelined reloads",
    note="333 leaders moved",
    extra={"rounds": 1},
)
PRODUCE_ROW = Measure(
    "produce_acks_all",
    "produce acks=all (batches/s)",
    3,
    figure=250.0,
    floor=1000.0,
    floor_phrase="Metadata RPCs/s from 4 threads",
    kind=Figure.PER_SECOND,
    unit="batches",
    floor_unit="RPC",
)
MACHINE = {"cpus": 2, "model": "AMD EPYC", "python": "3.11.7", "platform": "Linux"}


def _report(*rows: Measure, notes: tuple[str, ...] = ()) -> Report:
    return Report("failover", "controller failover, 1,000 partitions", rows, notes, {"x": 1})


@pytest.mark.parametrize(
    ("value", "floor", "expected"),
    [
        (1.5, 0.5, 3.0),
        (250.0, 1000.0, 0.25),
        (0.0, 2.0, 0.0),
        (1.0, 0.0, None),
        (1.0, -1.0, None),
        (-1.0, 1.0, None),
        (math.nan, 1.0, None),
        (1.0, math.nan, None),
        (math.inf, 1.0, None),
    ],
)
def test_ratio_is_figure_over_floor_or_nothing(
    value: float, floor: float, expected: float | None
) -> None:
    assert ratio(value, floor) == expected


def test_a_measure_ratio_uses_its_floor() -> None:
    assert FAILOVER_ROW.ratio == pytest.approx(3.0)
    assert PRODUCE_ROW.ratio == pytest.approx(0.25)


@pytest.mark.parametrize(
    ("value", "kind", "unit", "text"),
    [
        (2.954, Figure.SECONDS, "", "2.95 s"),
        (0.00025, Figure.SECONDS, "", "0.25 ms"),
        (0.0309, Figure.SECONDS, "", "30.9 ms"),
        (1234.56, Figure.PER_SECOND, "batches", "1,234.6 batches/s"),
        (123456.0, Figure.PER_SECOND, "RPC", "123,456 RPC/s"),
        (12.0, Figure.PER_SECOND, "", "12.0/s"),
        (math.nan, Figure.SECONDS, "", "-"),
    ],
)
def test_figures_are_formatted_with_their_unit(
    value: float, kind: Figure, unit: str, text: str
) -> None:
    assert format_figure(value, kind, unit) == text


def _run(figure: float, floor: float = 0.2, leaders: int = 3334) -> Measure:
    return Measure(
        "broker_failure",
        "broker failure, 10,000 partitions",
        10_000,
        figure=figure,
        floor=floor,
        floor_phrase="fenced multi writes",
        note=f"{leaders:,} leaderships moved",
        extra={"leaders_before": leaders},
    )


def test_the_median_run_is_the_row_with_the_spread_in_its_note_and_every_figure() -> None:
    """Its own floor and extras stay with the median run; the runs keep their order."""
    runs = [_run(1.12, 0.24, 3333), _run(0.79, 0.20), _run(0.95, 0.22, 3335)]
    row = median_of(runs)
    assert (row.figure, row.floor) == (0.95, 0.22)
    assert row.ratio == pytest.approx(0.95 / 0.22)
    assert row.note == "median of 3 runs (0.79 s to 1.12 s); 3,335 leaderships moved"
    assert row.extra == {"leaders_before": 3335, "runs": [1.12, 0.79, 0.95]}
    assert row.as_dict()["runs"] == [1.12, 0.79, 0.95]


def test_the_median_of_an_even_count_is_the_lower_middle_run_and_a_lost_run_sorts_last() -> None:
    assert median_of([_run(2.0), _run(1.0), _run(4.0), _run(3.0)]).figure == 2.0
    row = median_of([_run(math.nan), _run(1.0), _run(2.0)])
    assert row.figure == 2.0
    assert row.extra["runs"] == [None, 1.0, 2.0]


def test_one_run_is_its_own_median_and_none_has_no_median() -> None:
    only = _run(0.9)
    assert median_of([only]) is only
    with pytest.raises(ValueError, match="no run"):
        median_of([])


def test_the_table_has_a_row_per_measure_with_figure_floor_and_ratio() -> None:
    table = render_table(_report(FAILOVER_ROW, PRODUCE_ROW, notes=("a note",)))
    lines = table.splitlines()
    assert lines[0] == "controller failover, 1,000 partitions"
    assert lines[1].split() == ["figure", "floor", "ratio"]
    failover = next(line for line in lines if line.startswith("failover after kill -9"))
    assert failover.split()[-8:] == ["1.50", "s", "0.50", "s", "3.00x", "333", "leaders", "moved"]
    produce = next(line for line in lines if line.startswith("produce acks=all"))
    assert "250.0 batches/s" in produce
    assert "1,000.0 RPC/s" in produce
    assert produce.rstrip().endswith("0.25x")
    assert "  0.50 s = best of 3 pipelined reloads" in lines
    assert "  1,000.0 RPC/s = Metadata RPCs/s from 4 threads" in lines
    assert lines[-1] == "a note"


def test_a_floor_shared_by_rows_is_described_once() -> None:
    loading = Measure("controller_failover_loading", "  of which loading", 1000, 0.6, 0.5,
                      "best of 3 pipelined reloads")  # fmt: skip
    table = render_table(_report(FAILOVER_ROW, loading))
    assert table.count("= best of 3 pipelined reloads") == 1
    assert "1.20x" in table


def test_a_ratio_without_meaning_shows_a_dash() -> None:
    row = Measure("controller_failover", "failover", 10, 1.0, 0.0, "nothing read")
    line = render_table(_report(row)).splitlines()[2]
    assert line.split()[-1] == "-"


def test_a_seconds_line_has_every_field() -> None:
    [line] = result_lines(_report(FAILOVER_ROW), MACHINE, {"git": "abc", "finished_at_utc": "T"})
    assert line == {
        "measure": "controller_failover",
        "partitions": 1000,
        "seconds": 1.5,
        "floor_seconds": 0.5,
        "ratio": 3.0,
        "floor": "best of 3 pipelined reloads",
        "rounds": 1,
        "benchmark": "failover",
        "machine": MACHINE,
        "git": "abc",
        "finished_at_utc": "T",
    }


def test_a_rate_line_has_per_second_fields() -> None:
    [line] = result_lines(_report(PRODUCE_ROW), MACHINE, {})
    assert line["per_second"] == 250.0
    assert line["floor_per_second"] == 1000.0
    assert "seconds" not in line
    assert "floor_seconds" not in line
    assert (line["unit"], line["floor_unit"], line["ratio"]) == ("batches", "RPC", 0.25)
    assert line["measure"] == "produce_acks_all"
    assert line["partitions"] == 3


def test_a_nan_figure_is_written_as_null() -> None:
    row = Measure("produce_acks_1_p50", "p50", 3, math.nan, 0.001, "p50 of Metadata RPCs")
    [line] = result_lines(_report(row), MACHINE, {})
    assert line["seconds"] is None
    assert line["ratio"] is None
    json.dumps(line, allow_nan=False)


def test_bench_json_holds_settings_environment_rows_and_details() -> None:
    doc = bench_json(_report(FAILOVER_ROW), {"partitions": 1000}, {"cpus": 2})
    assert doc["benchmark"] == "failover"
    assert doc["settings"] == {"partitions": 1000}
    assert doc["environment"] == {"cpus": 2}
    assert doc["measures"][0]["measure"] == "controller_failover"
    assert doc["x"] == 1


def _read(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_results_go_to_a_dated_file_and_latest(tmp_path: Path) -> None:
    lines = result_lines(_report(FAILOVER_ROW, PRODUCE_ROW), MACHINE, {})
    dated = write_results(tmp_path / "results", lines, "20240131T120000Z")
    assert dated == tmp_path / "results" / "20240131T120000Z.jsonl"
    assert _read(dated) == lines
    assert (tmp_path / "results" / LATEST).read_text() == dated.read_text()


def test_a_later_run_replaces_latest_and_keeps_every_dated_file(tmp_path: Path) -> None:
    first = write_results(tmp_path, result_lines(_report(FAILOVER_ROW), MACHINE, {}), "T1")
    again = write_results(tmp_path, result_lines(_report(PRODUCE_ROW), MACHINE, {}), "T1")
    assert again == tmp_path / "T1-2.jsonl"
    assert [r["measure"] for r in _read(first)] == ["controller_failover"]
    assert [r["measure"] for r in _read(tmp_path / LATEST)] == ["produce_acks_all"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["T1-2.jsonl", "T1.jsonl", LATEST]


def test_cpu_model_is_read_from_cpuinfo() -> None:
    text = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n"
    assert cpu_model(text) == "AMD EPYC 7B13"
    assert cpu_model("processor\t: 0\n") is None


def test_the_machine_has_cpus_and_model_but_no_host_name() -> None:
    found = machine()
    assert found["cpus"]
    assert found["cpus"] >= 1
    assert "model" in found
    hostname = socket.gethostname()
    if len(hostname) > 4:  # a short name could appear inside a kernel version by chance
        assert hostname not in json.dumps(found)
