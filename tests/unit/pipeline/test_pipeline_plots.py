"""The pictures are drawn from plain pandas frames into PNG files, also when a run has no
sends or no faults."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline import plots

PNG = b"\x89PNG"


def _faults() -> pd.DataFrame:
    return pd.DataFrame(
        {"kind": ["kill"], "targets": ["broker1"], "start_ms": [5_000], "stop_ms": [9_000.0]}
    )


def test_the_timeline_and_latency_plots_are_pngs(tmp_path: Path) -> None:
    rates = pd.DataFrame(
        {
            "window_start_ms": [1_000, 2_000, 6_000],
            "ok": [9, 10, 2],
            "fail": [0, 0, 5],
            "info": [0, 1, 0],
        }
    )
    controllers = pd.DataFrame({"elected_ms": [7_000], "controller_epoch": [2]})
    leaders = pd.DataFrame({"elected_ms": [7_100]})
    timeline = plots.timeline_plot(
        tmp_path / "t.png", "r", 0, _faults(), rates, controllers, leaders, 1_000
    )
    sends = pd.DataFrame(
        {
            "invoke_ms": [1_000, 6_000, 7_000],
            "type": ["ok", "fail", "info"],
            "latency_ms": [3.0, 40.0, None],
        }
    )
    latency = plots.latency_plot(tmp_path / "l.png", "r", 0, _faults(), sends)
    assert timeline.read_bytes()[:4] == PNG
    assert latency.read_bytes()[:4] == PNG


def test_plots_of_an_empty_run_are_still_drawn(tmp_path: Path) -> None:
    empty = pd.DataFrame(columns=["kind", "targets", "start_ms", "stop_ms"])
    rates = pd.DataFrame(columns=["window_start_ms", "ok", "fail", "info"])
    sends = pd.DataFrame(columns=["invoke_ms", "type", "latency_ms"])
    none = pd.DataFrame(columns=["elected_ms", "controller_epoch"])
    assert plots.timeline_plot(tmp_path / "t.png", "r", 0, empty, rates, none, none, 1_000).exists()
    assert plots.latency_plot(tmp_path / "l.png", "r", 0, empty, sends).exists()
    measured = pd.DataFrame(columns=["measure", "scenario", "kind", "value_ms"])
    assert plots.recovery_plot(tmp_path / "r.png", measured).read_bytes()[:4] == PNG


def test_recovery_distributions_have_one_panel_per_measure(tmp_path: Path) -> None:
    measured = pd.DataFrame(
        {
            "measure": ["failure detection", "failure detection", "controller failover"],
            "scenario": ["a", "b", "a"],
            "kind": ["kill", "pause", "kill"],
            "value_ms": [6_000.0, 7_000.0, 6_100.0],
        }
    )
    path = plots.recovery_plot(tmp_path / "r.png", measured)
    assert path.stat().st_size > 1_000
