"""Finding run directories and judging one run the way the chaos runner does. Pure file
reading on the calling thread: the driver (discovery, configs) or a Spark Python worker
(`judge_run`, one run per call).

A run directory is one with a `config.json` (docs/runs.md, version 1). `discover` takes
run directories or directories of runs; a child without `config.json` is not a run and is
listed as skipped, but the runs directly inside it are taken too (a blind hunt's
`hunt-<time>/` and a planned hunt's `bugs-<time>/` hold their runs there).
A run of another version is refused (`rundir.layout.check_version`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rundir.history import HistoryOp
from rundir.invariants.convergence import time_to_convergence
from rundir.invariants.judge import judge
from rundir.layout import RunDir, check_version
from rundir.reader import RunLines, read_lines, run_inputs
from rundir.rejudge import ACKNOWLEDGED_LOSS_ALLOWED, recorded_settings
from rundir.results import RunVerdict

__all__ = ["Discovery", "PipelineInputError", "RunConfig", "discover", "judge_run", "read_config"]


class PipelineInputError(ValueError):
    """A path given to the pipeline is not a readable run directory of this version."""


@dataclass(frozen=True, slots=True)
class RunConfig:
    """What the pipeline needs from one run's `config.json`."""

    path: str
    run_id: str
    scenario: str
    seed: int | None
    started_ms: int
    topic: str
    invariants: tuple[str, ...]
    convergence_bound_s: float | None
    unclean_leader_election: bool
    #: Why the run may lose acknowledged writes otherwise (`config.json`'s
    #: `acknowledged_loss_allowed`: a power loss under a flush policy that does not fsync
    #: every message), or None.
    acknowledged_loss_allowed: str | None = None
    #: The historical bug switches the brokers ran with (docs/bugs.md), comma-separated.
    bug_switches: str = ""

    @classmethod
    def from_json(cls, path: Path, config: Mapping[str, Any]) -> RunConfig:
        """Decode `config` (already version-checked); `PipelineInputError` when a field
        the pipeline needs is missing or of the wrong type."""
        try:
            bound = config.get("convergence_bound_s")
            workload = config.get("workload") or {}
            return cls(
                path=str(path.resolve()),
                run_id=path.name,
                scenario=str(config["scenario"]),
                seed=None if config.get("seed") is None else int(config["seed"]),
                started_ms=int(config["started_ms"]),
                topic=str(config["topic"]),
                invariants=tuple(str(n) for n in config["invariants"]),
                convergence_bound_s=None if bound is None else float(bound),
                unclean_leader_election=bool(workload.get("unclean_leader_election", False)),
                acknowledged_loss_allowed=config.get(ACKNOWLEDGED_LOSS_ALLOWED) or None,
                bug_switches=",".join(str(n) for n in config.get("bug_switches") or ()),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise PipelineInputError(f"{path}/config.json: bad or missing field: {exc}") from None


@dataclass(frozen=True, slots=True)
class Discovery:
    """The runs found, in run-id order, and the directories that were not runs."""

    runs: tuple[RunConfig, ...]
    skipped: tuple[str, ...] = field(default=())


def read_config(path: Path) -> RunConfig:
    """The config of the run at `path`, version-checked."""
    run_dir = RunDir(path)
    try:
        config = run_dir.read_json(run_dir.config)
        check_version(config, path)
    except (OSError, ValueError) as exc:
        raise PipelineInputError(str(exc)) from None
    return RunConfig.from_json(path, config)


def discover(roots: Iterable[Path]) -> Discovery:
    """Every run under `roots` (each a run directory or a directory of runs)."""
    runs: dict[str, RunConfig] = {}
    skipped: list[str] = []
    for root in roots:
        if not root.is_dir():
            raise PipelineInputError(f"{root}: not a directory")
        candidates = [root] if (root / "config.json").exists() else sorted(root.iterdir())
        for candidate in candidates:
            if not candidate.is_dir():
                continue
            if (candidate / "config.json").exists():
                _add(runs, read_config(candidate))
                continue
            skipped.append(str(candidate))
            for child in _runs_inside(candidate):
                _add(runs, read_config(child))
    return Discovery(tuple(runs[k] for k in sorted(runs)), tuple(skipped))


def _runs_inside(directory: Path) -> list[Path]:
    """The run directories directly inside `directory` (unreadable: none)."""
    try:
        children = sorted(directory.iterdir())
    except OSError:
        return []
    return [c for c in children if c.is_dir() and (c / "config.json").exists()]


def _add(runs: dict[str, RunConfig], config: RunConfig) -> None:
    known = runs.get(config.run_id)
    if known is not None and known.path != config.path:
        raise PipelineInputError(f"two runs named {config.run_id}: {known.path}, {config.path}")
    runs[config.run_id] = config


def judge_run(
    config: RunConfig,
    lines: RunLines | None = None,
    decoded: Mapping[Path, Sequence[HistoryOp]] | None = None,
) -> tuple[RunVerdict, int | None]:
    """The run's verdict as the chaos runner computes it (the same inputs, the scenario's
    invariants only), and the time from the final heal to convergence in ms (None: it did
    not converge or had no snapshots). From `lines` when the run's files were read
    already, else read here; with their history's operations when decoded already
    (`rundir.reader.history_by_file`). The settings come from the run's config as
    `python -m chaos check` reads them (`rundir.rejudge.recorded_settings`)."""
    settings = recorded_settings(
        unclean_leader_election=config.unclean_leader_election,
        acknowledged_loss_allowed=config.acknowledged_loss_allowed,
        convergence_bound_s=config.convergence_bound_s,
        invariants=config.invariants,
        started_ms=config.started_ms,
        topic=config.topic,
    )
    inputs = run_inputs(
        read_lines(Path(config.path)) if lines is None else lines, decoded, **settings
    )
    verdict = judge(inputs)
    wanted = set(config.invariants)
    return (
        RunVerdict(tuple(r for r in verdict.results if r.name in wanted)),
        time_to_convergence(inputs.snapshots),
    )
