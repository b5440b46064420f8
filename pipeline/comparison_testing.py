"""Test doubles of the comparison page (`pipeline.comparison`): `write_comparison` writes
a comparison's directory with its `summary.json` as `python -m chaos compare` leaves it,
`comparison_summary` is that document: one scenario, two seeds; head broke
`acknowledged_writes` in seed 2 that base held, and its failover is slower beyond noise;
one figure measured on neither build. For tests only; one thread.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.comparison import SUMMARY

__all__ = ["comparison_summary", "write_comparison"]


def _side(run_dir: str, ok: bool | None, failed: list[str], **more: Any) -> dict[str, Any]:
    return {
        "run_dir": run_dir,
        "ok": ok,
        "failed": failed,
        "error": "",
        "exercised": True,
        "figures": {},
        **more,
    }


def comparison_summary(directory: Path) -> dict[str, Any]:
    """The summary of a comparison in `directory` (see the module docstring)."""
    runs = [
        {
            "scenario": "broker-failure",
            "seed": seed,
            "base_ok": True,
            "head_ok": seed == 1,
            "base_failed": [],
            "head_failed": [] if seed == 1 else ["acknowledged_writes"],
            "head_broke": [] if seed == 1 else ["acknowledged_writes"],
            "order": "base first" if seed == 1 else "head first",
            "base": _side(str(directory / "base" / f"b-s{seed}"), True, []),
            "head": _side(
                str(directory / "head" / f"h-s{seed}"),
                seed == 1,
                [] if seed == 1 else ["acknowledged_writes"],
            ),
        }
        for seed in (1, 2)
    ]
    return {
        "base": "commit 5a15647d7324 (HEAD)",
        "head": "work tree /home/me/testbed",
        "ok": False,
        "alpha": 0.05,
        "min_ratio": 1.25,
        "runs": runs,
        "figures": [
            {
                "scenario": "broker-failure",
                "figure": "failover_ms",
                "base": [1000.0, 1100.0, 1200.0],
                "head": [3000.0, 3100.0, 3200.0],
                "ratio": 2.8181818,
                "p": 0.05,
                "slower": True,
            },
            {
                "scenario": "broker-failure",
                "figure": "detection_ms",
                "base": [6173.0, None, 6000.0],
                "head": [5572.0, 5600.0, None],
                "ratio": 0.9,
                "p": None,
                "slower": False,
            },
            {
                "scenario": "broker-failure",
                "figure": "election_ms",
                "base": [None, None, None],
                "head": [None, None, None],
                "ratio": None,
                "p": None,
                "slower": False,
            },
        ],
        "regressions": [
            {
                "kind": "invariant",
                "scenario": "broker-failure",
                "name": "acknowledged_writes",
                "detail": "seed 2: head broke acknowledged_writes, which base held (h-s2)",
            },
            {
                "kind": "slower",
                "scenario": "broker-failure",
                "name": "failover_ms",
                "detail": "failover_ms is slower on head: median ratio 2.82, p = 0.050 "
                "over 3 seeds",
            },
        ],
        "not_run": [],
    }


def write_comparison(root: Path, name: str = "compare-20261205-210000") -> Path:
    """A comparison's directory `root / name` with its `summary.json`; its path."""
    directory = root / name
    directory.mkdir(parents=True)
    (directory / SUMMARY).write_text(json.dumps(comparison_summary(directory)))
    return directory
