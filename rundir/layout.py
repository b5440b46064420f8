"""The layout of one chaos run's directory, `runs/<run-id>/`, version `RUN_DIR_VERSION`.
This is the pipeline's input contract (docs/runs.md):

    config.json      scenario, seed, versions, session timeout, cluster, `run_dir_version`
    schedule.json    the realized schedule (`chaos.generator.schedule`), enough to replay the run
    faults.jsonl     each fault's start, took-effect check, stop and verified undo
    history/         the workload's history, one `<process>.jsonl` per thread
    events/          every node's event log, copied from the cluster's run directory
    metrics.jsonl    scrapes of every broker's Prometheus endpoint
    snapshots.jsonl  cluster snapshots (`rundir.invariants.ClusterSnapshot`) around the final heal
    verdict.json     the invariants' verdict
    coverage.json    the behaviours the run's event logs show (`rundir.coverage`)

Pure paths and small JSON writers; runs on the runner's thread.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rundir.errors import RunDirError

#: Bumped when a file's meaning or fields change incompatibly.
RUN_DIR_VERSION = 1


def new_run_id(scenario: str, seed: int | None) -> str:
    """`<UTC time>-<scenario>-s<seed>`, sortable and unique enough for one machine."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return f"{stamp}-{scenario}" + (f"-s{seed}" if seed is not None else "")


@dataclass(frozen=True, slots=True)
class RunDir:
    """The files of one run under `root`."""

    root: Path

    @property
    def run_id(self) -> str:
        """The directory's name."""
        return self.root.name

    @property
    def config(self) -> Path:
        """config.json"""
        return self.root / "config.json"

    @property
    def schedule(self) -> Path:
        """schedule.json"""
        return self.root / "schedule.json"

    @property
    def faults(self) -> Path:
        """faults.jsonl"""
        return self.root / "faults.jsonl"

    @property
    def history(self) -> Path:
        """history/ (one file per workload thread)"""
        return self.root / "history"

    @property
    def events(self) -> Path:
        """events/ (one file per node)"""
        return self.root / "events"

    @property
    def metrics(self) -> Path:
        """metrics.jsonl"""
        return self.root / "metrics.jsonl"

    @property
    def snapshots(self) -> Path:
        """snapshots.jsonl"""
        return self.root / "snapshots.jsonl"

    @property
    def audit(self) -> Path:
        """audit.json"""
        return self.root / "audit.json"

    @property
    def traces(self) -> Path:
        """traces/ (one file per fault that kept a trace)"""
        return self.root / "traces"

    @property
    def verdict(self) -> Path:
        """verdict.json"""
        return self.root / "verdict.json"

    @property
    def coverage(self) -> Path:
        """coverage.json"""
        return self.root / "coverage.json"

    def create(self) -> RunDir:
        """Make the directory (and history/, events/); returns self."""
        for d in (self.root, self.history, self.events):
            d.mkdir(parents=True, exist_ok=True)
        return self

    def write_json(self, path: Path, value: Mapping[str, Any]) -> None:
        """Write `value` as indented JSON to `path` (atomically: a temp file, then rename)."""
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(path)

    def read_json(self, path: Path) -> dict[str, Any]:
        """A JSON object written by `write_json`; `ValueError` when it is not one."""
        value = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(value, dict):
            raise ValueError(f"{path} does not hold a JSON object")
        return value

    def copy_events(self, source: Path) -> list[str]:
        """Copy every `<node>.jsonl` of the cluster's event directory `source` into
        events/ (whole files: invariants such as "epochs only grow" need what came
        before the run too); returns the node names copied."""
        nodes = []
        for path in sorted(source.glob("*.jsonl")):
            shutil.copyfile(path, self.events / path.name)
            nodes.append(path.stem)
        return nodes


class RunDirVersionError(RunDirError):
    """A run directory of another version than `RUN_DIR_VERSION`."""


def check_version(config: Mapping[str, Any], where: Path) -> None:
    """`RunDirVersionError` unless the run directory's config has this module's version."""
    version = config.get("run_dir_version")
    if version != RUN_DIR_VERSION:
        raise RunDirVersionError(
            f"{where}: run directory version {version!r}, this testbed reads {RUN_DIR_VERSION}"
        )
