"""`python -m chaos compare`'s arguments and its set-up errors that need no Docker (each
is exit 2 with a message that says what is wrong), a build whose brokers do not come up
(with fake projects), and the order of its runs against fake runs: interleaved, the
second of a pair replaying the first's schedule."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from chaos.__main__ import main
from chaos.compare.builds import REPO_ROOT, Build, Source, stage
from chaos.compare.command import DEFAULT_SCENARIOS, CompareRequest, run_comparison, run_pairs
from chaos.generator.scenarios import SCENARIOS
from chaos.generator.schedule import Schedule, write_schedule
from chaos.run.runner import RunOutcome, RunRequest
from chaos.run.setup import RunSetupError
from harness.compose import ComposeStartError
from rundir.invariants import InvariantResult, RunVerdict, Violation
from rundir.invariants.names import ACKNOWLEDGED_WRITES
from rundir.layout import RunDir


def test_the_default_scenarios_exist_and_cover_four_fault_families() -> None:
    kinds = {
        step.fault.kind for name in DEFAULT_SCENARIOS for step in SCENARIOS[name].schedule(1).steps
    }
    assert {"kill", "zk-leader-kill", "broker-isolate"} <= kinds
    assert all(SCENARIOS[name].workload.duration_s <= 90 for name in DEFAULT_SCENARIOS)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--scenarios", "no-such-scenario"], "unknown scenario(s) no-such-scenario"),
        (["--seeds", "1,x"], "seeds are comma-separated integers"),
        (["--seeds", "-1"], "seeds are integers of at least 0"),
        (["--alpha", "1.5"], "--alpha lies between 0 and 1"),
    ],
)
def test_bad_arguments_are_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", *argv]) == 2
    assert message in capsys.readouterr().err


def test_the_default_project_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COMPOSE_PROJECT_NAME", "mine-head")
    assert main(["compare", "--project-prefix", "mine"]) == 2
    assert "never runs on the default project mine-head" in capsys.readouterr().err


def test_a_head_that_does_not_compile_is_a_set_up_error_with_the_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = stage(str(REPO_ROOT), tmp_path).root
    (tree / "controller" / "active.py").write_text("def broken(:\n")
    argv = ["compare", "--base", str(REPO_ROOT), "--head", str(tree), "--out", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"work tree {tree}: the source does not compile" in err
    assert "controller/active.py" in err
    assert not list(tmp_path.glob("compare-*"))  # no comparison was written


class FakeSteps:
    """Staging, builds and projects without Docker: a source is an empty directory, a
    build is tagged `cmp-<spec>`, and the projects named in `failing` fail to start as
    compose does, with `log`; `started` records each project asked for and its tag."""

    def __init__(self, root: Path, failing: tuple[str, ...] = (), log: str = "") -> None:
        self.root = root
        self.failing = failing
        self.log = log
        self.started: list[tuple[str, str]] = []

    def stage_source(self, spec: str, under: Path) -> Source:
        root = self.root / "staged" / spec
        root.mkdir(parents=True)
        return Source(spec, f"tree {spec}", root)

    def build(self, source: Source, say: Any) -> Build:
        return Build(source, f"cmp-{source.spec}", reused=True)

    @contextmanager
    def start(
        self, root: Path, project: str, run_id: str, session_ms: int, **kw: Any
    ) -> Iterator[Any]:
        self.started.append((project, kw["env"]["TESTBED_TAG"]))
        if project in self.failing:
            raise ComposeStartError(self.log)
        yield SimpleNamespace(project=project)

    def steps(self) -> dict[str, Any]:
        """The keyword arguments of `run_comparison` that replace its steps."""
        return {"stage_source": self.stage_source, "build": self.build, "start": self.start}


def test_a_head_whose_brokers_do_not_come_up_is_a_set_up_error_with_their_log(
    tmp_path: Path,
) -> None:
    """Setup: fake sources and builds; the head project fails to start as compose does
    when a broker exits at start. Validate: a `RunSetupError` (exit 2) naming the head
    build and holding the container's log; head was tried first, so base was never
    started; nothing was run and no comparison was written."""
    log = "--- p-head-broker2-1: exited (exit code 3), health unhealthy\nno-such-start-up"
    steps = FakeSteps(tmp_path, failing=("p-head",), log=log)

    def run_one(request: RunRequest) -> RunOutcome:
        raise AssertionError(f"no run is performed, yet {request.scenario.name} was")

    out = tmp_path / "out"
    request = CompareRequest("base", "head", (SCENARIOS["broker-failure"],), (1,), out, "p")
    with pytest.raises(RunSetupError) as raised:
        run_comparison(request, lambda _: None, run_one=run_one, **steps.steps())
    message = str(raised.value)
    assert message.startswith(
        "the head build (tree head, images cmp-head) did not come up healthy on project p-head"
    )
    assert log in message
    assert steps.started == [("p-head", "cmp-head")]
    assert not list(out.glob("compare-*"))
    assert not (tmp_path / "staged" / "head").exists()  # the staged copies are removed


def test_a_comparison_is_written_with_its_page(tmp_path: Path) -> None:
    """Setup: fake sources, builds and projects; fake runs in which head breaks
    acknowledged_writes. Validate: both projects up, head's first; summary.json and the
    page (`python -m pipeline comparison`) with the regression and the plot."""
    steps = FakeSteps(tmp_path)
    runs = FakeRuns(tmp_path, {("broker-failure", 1)})
    request = CompareRequest(
        "base", "head", (SCENARIOS["broker-failure"],), (1,), tmp_path / "out", "p"
    )
    comparison, directory = run_comparison(request, lambda _: None, run_one=runs, **steps.steps())
    assert steps.started == [("p-head", "cmp-head"), ("p-base", "cmp-base")]
    assert comparison.exit_code() == 1
    assert (directory / "summary.json").exists()
    page = (directory / "report.html").read_text()
    assert "seed 1: head broke acknowledged_writes, which base held" in page
    assert (directory / "img" / "figures.png").read_bytes()[:4] == b"\x89PNG"


class FakeRuns:
    """Runs that record what they were asked and write the schedule they performed; the
    head build fails `fired` where `breaks` says."""

    def __init__(self, root: Path, breaks: set[tuple[str, int]]) -> None:
        self.root = root
        self.breaks = breaks
        self.asked: list[tuple[str, int, str, Schedule | None]] = []

    def __call__(self, request: RunRequest) -> RunOutcome:
        build = request.project.rsplit("-", 1)[1]
        self.asked.append((request.scenario.name, request.seed or 0, build, request.schedule))
        schedule = request.schedule or request.scenario.schedule(request.seed)
        run_dir = RunDir(request.runs_root / f"{request.scenario.name}-{request.seed}").create()
        write_schedule(run_dir.schedule, schedule)
        fails = build == "head" and (request.scenario.name, request.seed) in self.breaks
        violations = (Violation("t-0", "lost"),) if fails else ()
        verdict = RunVerdict((InvariantResult(ACKNOWLEDGED_WRITES, violations),))
        return RunOutcome(run_dir.root, verdict, 1.0, len(schedule.steps))


def test_the_runs_alternate_and_the_second_replays_the_firsts_schedule(tmp_path: Path) -> None:
    scenarios = (SCENARIOS["broker-failure"], SCENARIOS["zk-leader-loss"])
    request = CompareRequest("HEAD", ".", scenarios, (1, 2), tmp_path)
    runs = FakeRuns(tmp_path, {("zk-leader-loss", 2)})
    projects = {"base": "p-base", "head": "p-head"}
    pairs = run_pairs(request, projects, tmp_path / "c", say=lambda _: None, run_one=runs)
    assert [(name, seed, build) for name, seed, build, _ in runs.asked] == [
        ("broker-failure", 1, "base"),
        ("broker-failure", 1, "head"),
        ("broker-failure", 2, "head"),
        ("broker-failure", 2, "base"),
        ("zk-leader-loss", 1, "base"),
        ("zk-leader-loss", 1, "head"),
        ("zk-leader-loss", 2, "head"),
        ("zk-leader-loss", 2, "base"),
    ]
    firsts, seconds = runs.asked[0::2], runs.asked[1::2]
    assert all(schedule is None for *_, schedule in firsts)
    for (name, seed, _, _), (*_, replayed) in zip(firsts, seconds, strict=True):
        assert replayed == SCENARIOS[name].schedule(seed)  # read back from schedule.json
    assert [p.head_first for p in pairs] == [False, True, False, True]
    assert [(p.scenario, p.seed, p.base.ok, p.head.ok) for p in pairs][-1] == (
        "zk-leader-loss",
        2,
        True,
        False,
    )
    assert pairs[-1].head.failed == (ACKNOWLEDGED_WRITES,)
    assert pairs[0].base.run_dir == tmp_path / "c" / "base" / "broker-failure-1"


def test_a_run_that_cannot_be_set_up_is_recorded_and_the_other_build_still_runs(
    tmp_path: Path,
) -> None:
    def refuse_base(request: RunRequest) -> RunOutcome:
        if request.project.endswith("base"):
            raise RunSetupError("the cluster is not ready")
        return FakeRuns(tmp_path, set())(request)

    request = CompareRequest("HEAD", ".", (SCENARIOS["broker-failure"],), (1,), tmp_path)
    projects = {"base": "p-base", "head": "p-head"}
    (pair,) = run_pairs(request, projects, tmp_path, say=lambda _: None, run_one=refuse_base)
    assert pair.base.ok is None
    assert pair.base.error == "the cluster is not ready"
    assert pair.head.ok is True
