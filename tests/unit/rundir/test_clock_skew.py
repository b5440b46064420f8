"""A run whose node clocks were skewed by an hour is judged exactly as the same run
unskewed (`rundir.host_time`): every node's events are put on the host's time line
through their monotonic clock and the run's clock anchor, never through the nodes'
wall clocks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pipeline.testing import write_run
from rundir.check_report import check_run
from rundir.host_time import CLOCK_KEY, ClockAnchor, on_host_time
from rundir.layout import RunDir

#: The host's monotonic clock when its wall clock read the config's `started_ms`.
MONO_AT_START = 86_400_000
SKEW_MS = 60 * 60 * 1000


def _rewrite_events(run: Path, change: Any) -> None:
    for path in RunDir(run).events.glob("*.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        path.write_text("".join(json.dumps(change(path.stem, r)) + "\n" for r in lines))


def _recorded(root: Path, name: str, breaks: frozenset[str]) -> Path:
    """A run as the runner records it now: every event with the monotonic clock of its
    node (one kernel: the host's), the config with the clock anchor."""
    write_run(root, name, breaks=breaks)
    run = root / name
    config_path = RunDir(run).config
    config = json.loads(config_path.read_text())
    anchor = ClockAnchor(config["started_ms"], MONO_AT_START)
    config[CLOCK_KEY] = anchor.to_json()
    config_path.write_text(json.dumps(config))
    _rewrite_events(run, lambda node, r: {**r, "mono_ms": r["ts"] - anchor.wall_ms + MONO_AT_START})
    return run


def _skewed(run: Path, node: str, skew_ms: int) -> Path:
    """A copy of `run` whose `node` wrote its events with its wall clock `skew_ms` off."""
    copy = run.with_name(f"{run.name}-{node}{skew_ms:+d}")
    shutil.copytree(run, copy)
    _rewrite_events(copy, lambda n, r: {**r, "ts": r["ts"] + skew_ms} if n == node else r)
    return copy


def _verdict(run: Path) -> list[dict[str, Any]]:
    report = check_run(run)
    return [r.to_json() for r in report.verdict.results]


@pytest.mark.parametrize("breaks", [frozenset(), frozenset({"two_controllers", "lost_write"})])
@pytest.mark.parametrize("node", ["broker1", "broker2"])
@pytest.mark.parametrize("skew_ms", [SKEW_MS, -SKEW_MS])
def test_a_node_skewed_by_minutes_is_judged_as_the_same_run_unskewed(
    tmp_path: Path, breaks: frozenset[str], node: str, skew_ms: int
) -> None:
    run = _recorded(tmp_path, "r", breaks)
    assert _verdict(_skewed(run, node, skew_ms)) == _verdict(run)
    assert check_run(run).verdict.ok == (not breaks)


def test_without_the_anchor_the_same_skew_changes_the_verdict(tmp_path: Path) -> None:
    """The skew matters to the judgement when the wall clocks are all there is: the test
    above could fail: the violation's events carry the node's skewed time."""
    run = _recorded(tmp_path, "r", frozenset({"two_controllers"}))
    skewed = _skewed(run, "broker2", -SKEW_MS)
    for each in (run, skewed):
        config = json.loads(RunDir(each).config.read_text())
        del config[CLOCK_KEY]
        RunDir(each).config.write_text(json.dumps(config))
    assert _verdict(skewed) != _verdict(run)


def test_the_node_keeps_its_own_wall_time_beside_the_hosts() -> None:
    anchor = ClockAnchor(wall_ms=1_000_000, mono_ms=500)
    records = [(1, {"ts": 9_999_999, "mono_ms": 700}), (2, {"ts": 5})]
    placed = on_host_time(records, anchor)
    assert placed == [(1, {"ts": 1_000_200, "mono_ms": 700, "node_ts": 9_999_999}), (2, {"ts": 5})]
    assert on_host_time(records, None) == records
    assert ClockAnchor.from_config({CLOCK_KEY: {"wall_ms": 1, "mono_ms": True}}) is None
    assert ClockAnchor.from_config({CLOCK_KEY: anchor.to_json()}) == anchor
