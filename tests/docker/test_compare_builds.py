"""`python -m chaos compare` on real builds: a head with a deliberate defect in the
controller is caught against the clean tree, and a head whose image does not build, or
whose brokers do not come up, is a set-up error with the build's or start-up log.

Setup: two copies of this work tree staged as a user's work trees would be
(`chaos.compare.builds.stage`). The defective one has one line of `controller/active.py`
changed so that every leader election may pick an out-of-sync replica (what the
`unclean-election` switch does, here as an edit of the source). The scenario is a short
`last-replica-standing` (`chaos.testing.short_last_replica`: 42 s, the two brokers that
are not the controller killed 9 s apart, the stale one back first). One seed.
Steps: compare the clean tree (base) with the defective one (head): both images built
(or reused), two compose projects of the comparison's own up, the run on base, its
schedule replayed on head.
Validate: exit code 1; a regression names `acknowledged_writes`, which head broke and
base held (the history's anomalies of the lost writes are named too); `summary.json`
records both verdicts. A head whose Dockerfile fails: exit 2 and the build's log on
stderr, and no comparison written. A head whose broker process exits at start (its entry
point prints a line and raises `SystemExit(3)`): its image builds on `testbed-base` and
the wheelhouse, its project does not come up; exit 2 with the failing container's exit
code and log line on stderr, and no comparison written.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from chaos.__main__ import main
from chaos.compare.builds import REPO_ROOT, stage
from chaos.compare.command import CompareRequest, run_comparison
from chaos.testing import short_last_replica
from rundir.invariants.names import ACKNOWLEDGED_WRITES

CLEAN_LINE = "unclean_everywhere=switches.on(UNCLEAN_ELECTION),"
ENTRY_LINE = "    config = load_config(argv)\n"
SHORT = short_last_replica("compare-last-replica", "chaos-compare")


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This work tree staged once for the module, as a user's would be (with the generated
    gRPC code): staging generates code and compiles, a copy of it only copies."""
    tree = stage(str(REPO_ROOT), tmp_path_factory.mktemp("staged")).root
    assert (tree / "broker_node").is_dir()
    return tree


def _work_tree(staged: Path, tmp_path: Path) -> Path:
    """A copy of the staged work tree, for one test to change."""
    return Path(shutil.copytree(staged, tmp_path / "tree", symlinks=True))


def test_a_head_whose_image_does_not_build_is_exit_2_with_its_log(
    staged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = _work_tree(staged, tmp_path)
    dockerfile = tree / "docker" / "broker" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN echo no-such-build-step && false\n")
    argv = ["compare", "--base", str(REPO_ROOT), "--head", str(tree), "--out", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "the broker image does not build" in err
    assert "no-such-build-step" in err  # the build's own log
    assert not list(tmp_path.glob("compare-*"))


@pytest.mark.timeout(300)
def test_a_head_whose_brokers_do_not_come_up_is_exit_2_with_their_log(
    staged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = _work_tree(staged, tmp_path)
    entry = tree / "broker_node" / "__main__.py"
    source = entry.read_text()
    assert source.count(ENTRY_LINE) == 1
    refusal = (
        '    print("no-such-start-up", file=sys.stderr, flush=True)\n    raise SystemExit(3)\n'
    )
    entry.write_text(source.replace(ENTRY_LINE, refusal + ENTRY_LINE))
    out = tmp_path / "out"
    argv = [
        "compare",
        *("--base", str(REPO_ROOT), "--head", str(tree), "--out", str(out), "--seeds", "1"),
        *("--project-prefix", f"testbed-compare-test-{os.getpid()}", "--plain"),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"the head build (work tree {tree}, images cmp-" in err
    assert "did not come up healthy" in err
    assert "(exit code 3)" in err  # the failing container, named with its exit code
    assert "no-such-start-up" in err  # and its own log line
    assert not list(out.glob("compare-*"))


@pytest.mark.timeout(600)
def test_a_defect_in_the_controller_is_named_against_the_clean_tree(
    staged: Path, tmp_path: Path
) -> None:
    tree = _work_tree(staged, tmp_path)
    active = tree / "controller" / "active.py"
    source = active.read_text()
    assert source.count(CLEAN_LINE) == 1
    active.write_text(source.replace(CLEAN_LINE, "unclean_everywhere=True,"))
    request = CompareRequest(
        base=str(REPO_ROOT),
        head=str(tree),
        scenarios=(SHORT,),
        seeds=(1,),
        out=tmp_path / "out",
        prefix=f"testbed-compare-test-{os.getpid()}",
        plain=True,
    )
    comparison, directory = run_comparison(request)
    assert comparison.exit_code() == 1, comparison.text()
    # the lost writes also show as the history's anomalies (unseen, ...): all named
    named = [(r.kind, r.name) for r in comparison.regressions]
    assert ("invariant", ACKNOWLEDGED_WRITES) in named, comparison.text()
    assert {kind for kind, _ in named} == {"invariant"}, comparison.text()
    summary = json.loads((directory / "summary.json").read_text())
    (run,) = summary["runs"]
    assert run["base_ok"] is True
    assert run["head_ok"] is False
    assert ACKNOWLEDGED_WRITES in run["head_failed"]
    assert ACKNOWLEDGED_WRITES not in run["base_failed"]
    assert ACKNOWLEDGED_WRITES in [r["name"] for r in summary["regressions"]]
    assert (directory / "summary.md").read_text().startswith("# Comparison")
