"""`python -m chaos compare --base REF_OR_DIR --head REF_OR_DIR`: does the head build break
anything under faults that the base build holds, and does it recover slower?
(docs/chaos.md, "Comparing two builds").

    base, head = build_image(stage(--base)), build_image(stage(--head))   # chaos.compare.builds
    two compose projects up, <prefix>-head then <prefix>-base, each on its build's images
    for each scenario, for each seed:                  # interleaved, first base, then head first
        run on one build; replay its recorded schedule.json on the other
    figures of every run (python -m pipeline figures), then chaos.compare.judgement
    summary.json, summary.md, then the page (python -m pipeline comparison)

Both projects stay up for the whole comparison (one run at a time, on one of them), so
the host's load falls on both builds alike; they are removed at the end, also on errors
and Ctrl-C. Head's project comes up first: a head whose brokers do not come up is the
likelier set-up error, and then base's start is saved. The comparison is written to
`<out>/compare-<time>/summary.json` and `summary.md`, with the runs below it in `base/`
and `head/`, printed as a table, and drawn as a page, `report.html` with its plot
(`python -m pipeline comparison`, the report's own look, no Spark).

Exit code 0 when head breaks nothing base holds and is not slower beyond noise, 1 on a
regression (named), 2 on a set-up error: a source that does not build (with the build's
log), brokers that do not come up (with their logs), a run that could not be performed.
Main thread.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chaos.cluster.project_lock import ProjectBusy, held
from chaos.compare.builds import (
    REPO_ROOT,
    Build,
    Source,
    build_image,
    stage,
    switched,
    switches_of,
)
from chaos.compare.judgement import (
    ALPHA,
    MIN_RATIO,
    BuildRun,
    Comparison,
    Pair,
    compare,
    write_summary,
)
from chaos.errors import ChaosError, FaultError, ScheduleError
from chaos.generator.scenarios import SCENARIOS, Scenario
from chaos.generator.schedule import Schedule, read_schedule
from chaos.run.runner import RunOutcome, RunRequest, run
from chaos.run.setup import RunSetupError
from harness.compose import ComposeCluster, ComposeStartError, started_project
from rundir.layout import RunDir

__all__ = [
    "DEFAULT_PREFIX",
    "DEFAULT_SCENARIOS",
    "DEFAULT_SEEDS",
    "CompareRequest",
    "CompareUsageError",
    "add_parser",
    "compare_builds",
    "run_comparison",
    "run_pairs",
]

#: A controller, a broker, a ZooKeeper and a network fault: one short scenario each.
DEFAULT_SCENARIOS = ("controller-failover", "broker-failure", "zk-leader-loss", "network-partition")
DEFAULT_SEEDS = (1, 2, 3)
DEFAULT_PREFIX = "testbed-compare"
#: The brokers' ZooKeeper session in the comparison's projects, as in the bug hunt.
SESSION_MS = 6000
#: The comparison's page, which `python -m pipeline comparison` draws beside summary.json.
PAGE = "report.html"


class CompareUsageError(ChaosError):
    """Bad arguments to `compare`."""


@dataclass(frozen=True, slots=True)
class CompareRequest:
    """What to compare: two sources (a git ref or a work tree each), the scenarios and
    seeds to run on both, where the comparison goes, the projects' name prefix."""

    base: str
    head: str
    scenarios: tuple[Scenario, ...]
    seeds: tuple[int, ...]
    out: Path
    prefix: str = DEFAULT_PREFIX
    session_ms: int = SESSION_MS
    plain: bool = False
    alpha: float = ALPHA
    min_ratio: float = MIN_RATIO


def add_parser(commands: Any) -> None:
    """The `compare` subparser."""
    parser = commands.add_parser(
        "compare",
        help="run the same seeded faults on two builds and compare verdicts and recovery",
        description="Build the broker image of --base and of --head (a git ref of this "
        "repository or a directory holding a work tree of it), run the same seeded "
        "schedules on each, on a compose project of its own, and compare. Exit 0 when head "
        "breaks nothing base holds and is not slower beyond noise, 1 on a regression, 2 on "
        "a set-up error.",
    )
    parser.add_argument("--base", default="HEAD", help="git ref or work tree (default HEAD)")
    parser.add_argument(
        "--head",
        default=".",
        help="git ref, work tree, or switches:BUG[,BUG] (base with bug switches on; default .)",
    )
    parser.add_argument(
        "--scenarios",
        default=",".join(DEFAULT_SCENARIOS),
        help=f"comma-separated scenarios (default {','.join(DEFAULT_SCENARIOS)})",
    )
    parser.add_argument("--seeds", default="1,2,3", help="comma-separated seeds (default 1,2,3)")
    parser.add_argument(
        "--out", type=Path, default=REPO_ROOT / "runs", help="where compare-<time>/ goes (runs/)"
    )
    parser.add_argument(
        "--project-prefix",
        default=DEFAULT_PREFIX,
        help=f"the projects are PREFIX-base and PREFIX-head (default {DEFAULT_PREFIX})",
    )
    parser.add_argument("--alpha", type=float, default=ALPHA, help=f"rank test level ({ALPHA})")
    parser.add_argument(
        "--min-ratio",
        type=float,
        default=MIN_RATIO,
        help=f"median head/base a slower figure must reach ({MIN_RATIO})",
    )
    parser.add_argument("--plain", action="store_true", help="plain progress lines, no live panel")


def _scenarios(text: str) -> tuple[Scenario, ...]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown or not names:
        raise CompareUsageError(
            f"unknown scenario(s) {', '.join(unknown) or '(none given)'}; "
            "`python -m chaos list` shows them"
        )
    return tuple(SCENARIOS[n] for n in dict.fromkeys(names))


def _seeds(text: str) -> tuple[int, ...]:
    try:
        seeds = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise CompareUsageError(f"seeds are comma-separated integers, got {text!r}") from None
    if not seeds or any(s < 0 for s in seeds):
        raise CompareUsageError(f"seeds are integers of at least 0, got {text!r}")
    return tuple(dict.fromkeys(seeds))


def compare_builds(args: argparse.Namespace, default_project: str) -> int:
    """`compare`: the comparison (see the module docstring); the exit code."""
    if not 0 < args.alpha < 1 or args.min_ratio < 1:
        raise CompareUsageError("--alpha lies between 0 and 1 and --min-ratio is at least 1")
    request = CompareRequest(
        args.base,
        args.head,
        _scenarios(args.scenarios),
        _seeds(args.seeds),
        args.out,
        args.project_prefix,
        plain=args.plain,
        alpha=args.alpha,
        min_ratio=args.min_ratio,
    )
    if default_project in (f"{request.prefix}-base", f"{request.prefix}-head"):
        raise CompareUsageError(
            f"the comparison never runs on the default project {default_project}"
        )
    comparison, directory = run_comparison(request)
    print(comparison.text())
    print(f"summary: {directory / 'summary.json'} and {directory / 'summary.md'}")
    if (directory / PAGE).exists():
        print(f"page: {directory / PAGE}")
    return comparison.exit_code()


#: One chaos run (`chaos.run.runner.run`; a fake in tests).
RunOne = Callable[[RunRequest], RunOutcome]


#: A build's compose project up and healthy (`harness.compose.started_project`; a fake
#: in tests).
StartProject = Callable[..., AbstractContextManager[ComposeCluster]]


def run_comparison(
    request: CompareRequest,
    say: Callable[[str], None] = print,
    *,
    stage_source: Callable[[str, Path], Source] = stage,
    build: Callable[[Source, Callable[[str], None]], Build] = build_image,
    start: StartProject = started_project,
    run_one: RunOne = run,
) -> tuple[Comparison, Path]:
    """Build, run and compare (see the module docstring): the comparison and its directory.
    `RunSetupError` (a `BuildError` among them) when a build or a project cannot be set up;
    nothing is written then. The keyword arguments replace the steps in tests."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    directory = request.out.resolve() / f"compare-{stamp}"
    staging = REPO_ROOT / ".build" / "compare"
    staging.mkdir(parents=True, exist_ok=True)
    head_switches = switches_of(request.head)
    specs = [("base", request.base)] + ([] if head_switches else [("head", request.head)])
    sources: list[Source] = []
    try:
        for name, spec in specs:
            sources.append(stage_source(spec, staging))  # all staged and compiled first
            say(f"{name}: {sources[-1].description}")
        builds = [build(source, say) for source in sources]
    finally:
        for source in sources:
            shutil.rmtree(source.root, ignore_errors=True)
    base = builds[0]
    head = switched(base, head_switches) if head_switches else builds[1]
    say(f"comparing head {head.description} with base {base.description}")
    with ExitStack() as stack:
        clusters = {}
        # head first: it is the likelier not to come up, and then base's start is saved
        for name, one in (("head", head), ("base", base)):
            clusters[name] = stack.enter_context(_project(request, name, one, stamp, start))
        projects = {name: cluster.project for name, cluster in clusters.items()}
        pairs = run_pairs(request, projects, directory, say, run_one)
    pairs = _with_figures(pairs, say)
    comparison = compare(
        base.description,
        head.description,
        pairs,
        request.alpha,
        request.min_ratio,
    )
    write_summary(directory, comparison)
    _page(directory, say)
    return comparison, directory


@contextmanager
def _project(
    request: CompareRequest, name: str, build: Build, stamp: str, start: StartProject
) -> Iterator[ComposeCluster]:
    """The build's compose project, up; a `RunSetupError` with the containers' logs when
    it does not come up healthy (errors of the block itself pass through unchanged)."""
    project = f"{request.prefix}-{name}"
    up = False
    try:
        with (
            held(request.out, project),
            start(
                REPO_ROOT,
                project,
                f"compare-{stamp}-{name}",
                request.session_ms,
                stable_ports=True,
                env={"TESTBED_TAG": build.tag, **build.env},
            ) as cluster,
        ):
            up = True
            yield cluster
    except ProjectBusy as exc:
        raise CompareUsageError(str(exc)) from None
    except (ComposeStartError, TimeoutError) as exc:
        if up:
            raise
        raise RunSetupError(
            f"the {name} build ({build.description}, images {build.tag}) did not come "
            f"up healthy on project {project}; its start-up log:\n{exc}"
        ) from None


def run_pairs(
    request: CompareRequest,
    projects: Mapping[str, str],
    directory: Path,
    say: Callable[[str], None] = print,
    run_one: RunOne = run,
) -> list[Pair]:
    """Every scenario and seed on both builds (`projects`: the compose project of `base`
    and of `head`), runs into `directory/<build>/`, alternating which build goes first;
    the second replays the first's recorded schedule."""
    pairs = []
    todo = [(scenario, seed) for scenario in request.scenarios for seed in request.seeds]
    for number, (scenario, seed) in enumerate(todo):
        head_first = number % 2 == 1
        order = ("head", "base") if head_first else ("base", "head")
        done: dict[str, BuildRun] = {}
        schedule: Schedule | None = None
        for name in order:
            say(f"==> [{number + 1}/{len(todo)}] {scenario.name} seed {seed} on {name}")
            one = RunRequest(
                scenario, seed, projects[name], directory / name, schedule, request.plain
            )
            done[name] = _one_run(run_one, one)
            say(f"{scenario.name} seed {seed} on {name}: {done[name].word()}")
            run_dir = done[name].run_dir
            if schedule is None and run_dir is not None:
                schedule = _recorded(run_dir)
        pairs.append(Pair(scenario.name, seed, done["base"], done["head"], head_first))
    return pairs


def _recorded(run_dir: Path) -> Schedule | None:
    try:
        return read_schedule(RunDir(run_dir).schedule)
    except (OSError, ScheduleError):
        return None


def _one_run(run_one: RunOne, request: RunRequest) -> BuildRun:
    try:
        outcome = run_one(request)
    except (RunSetupError, FaultError) as exc:
        return BuildRun(None, None, error=str(exc))
    failed = tuple(r.name for r in outcome.verdict.results if not r.ok)
    return BuildRun(outcome.run_dir, outcome.ok, failed, exercised=outcome.exercised)


def _page(directory: Path, say: Callable[[str], None]) -> None:
    """The comparison's page, `report.html` beside `summary.json` (`python -m pipeline
    comparison`, no Spark); a page that cannot be drawn is said, not an error."""
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "comparison", str(directory)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        say(f"the comparison's page was not drawn: {done.stderr.strip()[-2000:]}")


def _with_figures(pairs: Sequence[Pair], say: Callable[[str], None]) -> list[Pair]:
    """`pairs` with each run's recovery figures (`python -m pipeline figures`)."""
    dirs = [str(r.run_dir) for p in pairs for r in (p.base, p.head) if r.run_dir is not None]
    found: dict[str, dict[str, float | None]] = {}
    if dirs:
        done = subprocess.run(
            [sys.executable, "-m", "pipeline", "figures", *dirs],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0:
            found = json.loads(done.stdout)
        else:
            say(f"recovery figures not measured: {done.stderr.strip()[-2000:]}")

    def measured(run: BuildRun) -> BuildRun:
        if run.run_dir is None:
            return run
        figures = found.get(str(run.run_dir), {})
        return BuildRun(run.run_dir, run.ok, run.failed, run.error, run.exercised, figures)

    return [
        Pair(p.scenario, p.seed, measured(p.base), measured(p.head), p.head_first) for p in pairs
    ]
