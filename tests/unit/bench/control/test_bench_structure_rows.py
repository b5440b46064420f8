"""The rows of the controller's structure: the in-process steps as
`controller.failover_timing` prints them, and the failover row of a spare new controller.
Pure; no process is started."""

from __future__ import annotations

from typing import Any

import pytest

from bench.control import controller_work, spare
from bench.control.layout import ClusterLayout

TIMING: dict[str, Any] = {
    "partitions": 1000,
    "runs": 3,
    "controller": {"online": 0.2, "offline": 0.3, "elections": 0.1, "batching": 0.05},
    "controller_runs": {
        "online": [0.2, 0.25, 0.19],
        "offline": [0.3, 0.3, 0.3],
        "elections": [0.1, 0.1, 0.1],
        "batching": [0.05, 0.05, 0.05],
    },
    "floor": {"online": 0.01, "offline": 0.02, "elections": 0.005, "batching": 0.0},
    "replicas_online": 2000,
    "replicas_offline": 1000,
    "elections": 334,
}


def test_each_step_is_a_row_against_its_own_floor() -> None:
    rows = {m.measure: m for m in controller_work.rows(TIMING)}
    assert list(rows) == [
        "controller_own_online",
        "controller_own_offline",
        "controller_own_elections",
    ]
    assert rows["controller_own_online"].ratio == pytest.approx(20.0)
    assert rows["controller_own_elections"].ratio == pytest.approx(20.0)
    assert "2,000 replica states" in rows["controller_own_online"].floor_phrase
    assert "334 leaders" in rows["controller_own_elections"].floor_phrase
    assert rows["controller_own_online"].note.startswith("median of 3 runs (0.190 to 0.250 s)")
    assert rows["controller_own_online"].as_dict()["runs"] == [0.2, 0.25, 0.19]


def test_a_single_run_says_no_median() -> None:
    one = {
        **TIMING,
        "runs": 1,
        "controller_runs": {k: [v] for k, v in TIMING["controller"].items()},
    }
    (online, *_) = controller_work.rows(one)
    assert not online.note.startswith("median")


def test_the_spare_is_one_broker_above_the_cluster() -> None:
    assert spare.spare_id(ClusterLayout(1000, 10, 3)) == 4
