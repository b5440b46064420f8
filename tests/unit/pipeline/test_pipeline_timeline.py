"""A run's timeline puts everything on one axis of seconds since the run's start: a fault's
band runs from its effect to its undo, a controller's tenure ends at its resignation, each
partition's lane holds its leader and ISR changes, the rates and latency are series by
window; and the front page's grid lists failing scenarios first."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from pipeline.index_page import distribution_svg, failing, grid, recovery_cells
from pipeline.run_writer import fault_phases
from pipeline.runs import RunConfig
from pipeline.timeline import timeline

T0 = 1_700_000_000_000


def _tables() -> dict[str, pd.DataFrame]:
    return {
        "rates": pd.DataFrame(
            {"window_start_ms": [T0 + 1_000, T0], "ok": [5, 4], "fail": [0, 1], "info": [0, 0]}
        ),
        "latency": pd.DataFrame(
            {
                "window_start_ms": [T0],
                "p50_ms": [1.5],
                "p95_ms": [2.0],
                "p99_ms": [float("nan")],
                "max_ms": [3.0],
            }
        ),
        "failovers": pd.DataFrame(
            {
                "node": ["broker2"],
                "controller_epoch": [2],
                "elected_ms": [T0 + 6_000],
                "done_ms": [T0 + 6_150],
            }
        ),
        "elections": pd.DataFrame(
            {
                "topic": ["t"],
                "partition": [0],
                "leader": [2],
                "leader_epoch": [1],
                "elected_ms": [T0 + 6_250],
            }
        ),
    }


def test_the_timeline_is_in_seconds_since_the_start() -> None:
    events = [
        ["broker1", 1, T0 - 500, "controller_elected", {"controller_epoch": 1}],
        [
            "broker1",
            2,
            T0 + 100,
            "leader_elected",
            {"topic": "t", "partition": 0, "leader": 1, "isr": [1, 2], "leader_epoch": 0},
        ],
        ["broker1", 3, T0 + 5_000, "controller_resigned", {"controller_epoch": 1}],
        ["broker2", 1, T0 + 6_000, "controller_elected", {"controller_epoch": 2}],
        [
            "broker2",
            2,
            T0 + 6_250,
            "isr_changed",
            {"topic": "t", "partition": 0, "leader": 2, "isr": [2], "leader_epoch": 1},
        ],
    ]
    faults = fault_phases("step-0", "kill", "broker1", T0 + 4_000, 6, T0 + 9_000, 10)
    shown = timeline(T0, events, faults, _tables(), 1_000)
    assert (shown["start"], shown["end"]) == (-0.5, 9.01)
    (band,) = shown["faults"]
    assert (band["kind"], band["node"], band["from"], band["to"]) == (
        "kill",
        "broker1",
        4.006,
        9.01,
    )
    assert [(c["node"], c["epoch"], c["from"], c["to"]) for c in shown["controllers"]] == [
        ("broker1", 1, -0.5, 5.0),
        ("broker2", 2, 6.0, 9.01),
    ]
    (lane,) = shown["partitions"]
    assert lane["name"] == "t-0"
    assert [c[:4] for c in lane["changes"]] == [[0.1, 1, [1, 2], 0], [6.25, 2, [2], 1]]
    assert shown["rates"] == {
        "t": [0.0, 1.0],
        "ok": [4.0, 5.0],
        "fail": [1.0, 0.0],
        "info": [0.0, 0.0],
    }
    assert shown["latency"]["p99_ms"] == [None]
    assert [(m["t"], m["kind"]) for m in shown["markers"]] == [
        (6.0, "failover"),
        (6.15, "failover"),
        (6.25, "election"),
    ]


def _run(run_id: str, scenario: str, seed: int) -> RunConfig:
    return RunConfig(f"/r/{run_id}", run_id, scenario, seed, T0, "t", (), None, False)


def test_the_grid_puts_failing_scenarios_first_and_links_every_run() -> None:
    runs = [_run("a", "alpha", 1), _run("b", "beta", 1), _run("c", "beta", 2)]
    verdicts = pd.DataFrame(
        {"run_id": ["a", "b", "c"], "ok": [True, False, None], "violated": [[], ["x"], []]}
    )
    shown = grid(runs, verdicts)
    assert shown["seeds"] == [1, 2]
    assert [(r["scenario"], r["failed"]) for r in shown["rows"]] == [("beta", 2), ("alpha", 0)]
    beta = shown["rows"][0]["cells"]
    assert [(c.symbol, c.css, c.href) for cells in beta for c in cells] == [
        ("\u2717", "fail", "runs/b/index.html"),
        ("?", "unknown", "runs/c/index.html"),
    ]
    assert [(f["name"], f["runs"]) for f in failing(runs, verdicts)] == [("x", 1)]


def test_a_run_with_bug_switches_is_marked_beside_the_fixed_run_of_its_seed() -> None:
    runs = [_run("fixed", "alpha", 1), replace(_run("buggy", "alpha", 1), bug_switches="kip-380")]
    verdicts = pd.DataFrame(
        {"run_id": ["fixed", "buggy"], "ok": [True, False], "violated": [[], ["x"]]}
    )
    (cells,) = grid(runs, verdicts)["rows"][0]["cells"]
    assert [(c.css, c.title) for c in cells] == [
        ("pass", "fixed: ok"),
        ("fail switched", "buggy: bug switches kip-380, violated x"),
    ]


def test_recovery_is_a_number_for_one_value_and_a_plot_on_the_measures_scale() -> None:
    measured = pd.DataFrame(
        {
            "measure": ["m", "m", "m"],
            "scenario": ["s", "s", "u"],
            "kind": ["kill"] * 3,
            "value_ms": [100.0, 300.0, 42.0],
        }
    )
    several, one = recovery_cells(measured)
    assert (one["value"], one["plot"]) == ("42 ms", None)
    assert several["value"] == "median 200 ms (100 to 300)"
    assert str(several["plot"]).count("<circle") == 2
    # one scale per measure, 42 to 300 ms: 100 ms sits a fifth of the way along
    assert 'cx="38.2"' in several["plot"]
    assert 'cx="156.0"' in several["plot"]
    assert "<title>n 2, min 100, median 200, max 300 ms</title>" in distribution_svg([100.0, 300.0])


def test_recovery_of_a_bug_switched_run_is_not_pooled_with_the_fixed_build() -> None:
    runs = [_run("fixed", "s", 1), replace(_run("buggy", "s", 1), bug_switches="kafka-1188")]
    measured = pd.DataFrame(
        {
            "run_id": ["fixed", "buggy"],
            "measure": ["m", "m"],
            "scenario": ["s", "s"],
            "kind": ["kill"] * 2,
            "value_ms": [100.0, 9_000.0],
        }
    )
    shown = [(r["scenario"], r["value"]) for r in recovery_cells(measured, runs)]
    assert shown == [("s", "100 ms"), ("s + kafka-1188", "9000 ms")]
