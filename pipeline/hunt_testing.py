"""Test doubles of the blind hunt's summary (`pipeline.hunt_summary`): `hunt_summary` is
the document `python -m chaos hunt` leaves in `hunt-<time>/summary.json` (two bugs, one
caught after 3 runs in 4.5 minutes and shrunk to 2 steps, one not caught; 6 fixed runs,
no false alarm), `write_hunt` writes it into a directory. For tests only; one thread.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.hunt_summary import SUMMARY

__all__ = ["hunt_summary", "write_hunt"]


def hunt_summary() -> dict[str, Any]:
    """The summary of a blind hunt of two bugs (see the module docstring)."""
    return {
        "bugs": [
            {
                "bug": "unclean-election",
                "caught": True,
                "invariant": "acknowledged_writes",
                "runs_to_catch": 3,
                "minutes_to_catch": 4.5,
                "shrunk_steps": 2,
                "coverage": {"total": 41, "grown": [30, 8, 3]},
            },
            {
                "bug": "kafka-1188",
                "caught": False,
                "invariant": None,
                "runs_to_catch": None,
                "minutes_to_catch": None,
                "shrunk_steps": None,
                "coverage": {"total": 35, "grown": [28, 4, 2, 1, 0]},
            },
        ],
        "fixed_runs": 6,
        "fixed_false_alarms": 0,
        "runs_per_hour": 38.2,
    }


def write_hunt(root: Path, name: str) -> Path:
    """`root/name/summary.json` holding `hunt_summary()`; the directory."""
    directory = root / name
    directory.mkdir(parents=True)
    (directory / SUMMARY).write_text(json.dumps(hunt_summary(), indent=2), encoding="utf-8")
    return directory
