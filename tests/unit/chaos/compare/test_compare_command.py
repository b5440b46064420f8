"""`python -m chaos compare`'s arguments and its set-up errors that need no Docker: each is
exit 2 with a message that says what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from chaos.__main__ import main
from chaos.compare.builds import REPO_ROOT, stage
from chaos.compare.command import DEFAULT_SCENARIOS
from chaos.generator.scenarios import SCENARIOS


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
