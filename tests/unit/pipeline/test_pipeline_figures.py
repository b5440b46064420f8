"""The per-run figures in pandas, without Spark, from hand-made rows of two runs: each
figure is computed by run, a missing value matches nothing, and quantiles interpolate as
Spark's `percentile` does; every answer worked out by hand."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from pipeline import figures


def _faults(*rows: tuple[str, int, str, str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"run_id": r, "ts": ts, "fault": f, "kind": k, "targets": "broker1", "phase": p}
            for r, ts, f, k, p in rows
        ],
        columns=["run_id", *figures.FAULT_COLUMNS],
    )


def _events(*rows: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=["run_id", *figures.EVENT_COLUMNS])


FAULTS = _faults(
    ("a", 100, "f0", "kill", "start"),
    ("a", 900, "f0", "kill", "stop"),
    ("a", 1_000, "f1", "pause", "start"),
    ("b", 100, "f0", "stop", "start"),
)


def test_quantiles_interpolate_between_ranks_and_skip_missing_values() -> None:
    codes = np.array([0, 0, 0, 0, 1, 1, 2])
    values = np.array([4.0, 1.0, 3.0, 2.0, np.nan, 7.0, np.nan])
    got = figures.percentiles(codes, values, 4, (0.5, 0.95, 1.0))
    # group 0 sorted 1, 2, 3, 4: position 3 * 0.5 -> 2.5; 3 * 0.95 (2.85 in binary, a
    # little less) -> 3 + (position - 2) * (4 - 3), as Spark computes it
    assert got[0].tolist() == [2.5, 3 + (3 * 0.95 - 2) * (4 - 3), 4.0]
    assert got[1].tolist() == [7.0, 7.0, 7.0]
    assert np.isnan(got[2]).all()
    assert np.isnan(got[3]).all()


def test_detection_takes_the_first_notice_of_the_same_run_at_or_after_the_start() -> None:
    events = _events(
        {"run_id": "a", "ts": 90, "kind": "broker_change", "noticed": True},
        {"run_id": "a", "ts": 350, "kind": "controller_elected", "noticed": True},
        {"run_id": "a", "ts": 200, "kind": "broker_change", "noticed": False},
        {"run_id": "b", "ts": 120, "kind": "broker_change", "noticed": True},
    )
    got = figures.detection(events, FAULTS).set_index(["run_id", "fault"])
    assert got.loc[("a", "f0"), "detection_ms"] == 250
    assert got.loc[("a", "f0"), "detected_by"] == "controller_elected"
    assert got.loc[("a", "f0"), "stop_ms"] == 900
    assert pd.isna(got.loc[("a", "f1"), "detected_ms"])  # nothing after 1,000 in run a
    assert got.loc[("b", "f0"), "detection_ms"] == 20
    assert pd.isna(got.loc[("b", "f0"), "stop_ms"])


def test_an_election_is_charged_to_the_last_fault_of_its_run_before_it() -> None:
    events = _events(
        *[
            {
                "run_id": r,
                "ts": ts,
                "kind": "leader_elected",
                "strategy": s,
                "topic": "t",
                "partition": 0,
                "leader": 1,
                "leader_epoch": e,
            }
            for r, ts, s, e in [
                ("a", 1_200, "offline", 3),
                ("a", 50, "offline", 1),  # before the run started
                ("a", 500, "initial", 2),  # initial elections do not count
                ("a", 600, None, 2),  # no strategy: not an election that counts
                ("b", 400, "offline", 1),
            ]
        ]
    )
    got = figures.elections(events, FAULTS, {"a": 60, "b": 0}).set_index("run_id")
    assert got.loc["a", "kind"] == "pause"
    assert got.loc["a", "since_fault_ms"] == 200
    assert got.loc["b", "since_fault_ms"] == 300


def _history(*rows: tuple[str, str, int, int, str | None, int]) -> pd.DataFrame:
    """(run, process, op_id, partition, type, wall_ms) lines; time_ns from wall_ms."""
    return pd.DataFrame(
        [
            {
                "run_id": r,
                "type": t,
                "process": p,
                "op_id": op,
                "topic": "t",
                "partition": part,
                "wall_ms": ms,
                "time_ns": ms * 1_000_000 + 1_750_000_000_000_000_000,
                "has_time_ns": True,
            }
            for r, p, op, part, t, ms in rows
        ],
        columns=["run_id", *figures.SEND_COLUMNS],
    )


def test_sends_pair_invokes_with_completions_to_the_exact_nanosecond() -> None:
    sent = figures.sends(
        _history(
            ("a", "p0", 0, 0, "invoke", 100),
            ("a", "p0", 0, 0, "ok", 103),
            ("a", "p0", 1, 0, "invoke", 200),  # never completed
            ("b", "p0", 0, 0, "fail", 150),  # completes an invoke of run b only
        )
    ).set_index(["run_id", "op_id"])
    assert sent.loc[("a", 0), "latency_ms"] == 3.0
    assert sent.loc[("a", 1), "type"] == "info"
    assert pd.isna(sent.loc[("a", 1), "latency_ms"])
    assert ("b", 0) not in sent.index


def test_an_unavailability_window_runs_from_the_first_failed_invoke_to_the_next_ack() -> None:
    history = _history(
        *[
            ("a", "p0", op, 0, kind, ms)
            for op, (kind, ms) in enumerate(
                [("ok", 100), ("fail", 200), ("fail", 300), ("ok", 400), ("fail", 500)]
            )
        ],
        *[("a", "p0", op, 0, "invoke", ms - 10) for op, ms in enumerate([100, 200, 300, 400, 500])],
    )
    got = figures.unavailability(figures.sends(history)).sort_values("start_ms")
    assert got[["start_ms", "end_ms", "closed", "failed"]].values.tolist() == [
        [190, 400, True, 2],
        [490, 500, False, 1],
    ]


@pytest.mark.parametrize("window_ms", [1_000, 100])
def test_latency_quantiles_are_per_run_and_window(window_ms: int) -> None:
    history = _history(
        *[("a", "p0", op, 0, "invoke", 1_000 + op) for op in range(4)],
        *[("a", "p0", op, 0, "ok", 1_000 + op + 1 + op) for op in range(4)],
        ("b", "p0", 0, 0, "invoke", 1_000),
        ("b", "p0", 0, 0, "ok", 1_009),
    )
    got = figures.latency(figures.sends(history), window_ms).set_index("run_id")
    assert got.loc["a", "sends"] == 4
    assert got.loc["a", "p50_ms"] == 2.5  # latencies 1, 2, 3, 4
    assert got.loc["a", "max_ms"] == 4.0
    assert got.loc["b", "p99_ms"] == 9.0
    assert set(got["window_start_ms"]) == {1_000}
