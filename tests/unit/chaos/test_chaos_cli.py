"""`python -m chaos`: the default project as compose names it, heal with nothing to do,
and bad arguments or an unreadable state refused with their exit codes. Healing real
faults is in tests/docker/test_faults_process.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chaos.__main__ import default_project, main
from chaos.heal_state import pointer_path

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("env", "directory", "expected"),
    [
        ({"COMPOSE_PROJECT_NAME": "custom"}, "repo", "custom"),
        ({}, "My.Testbed Repo", "mytestbedrepo"),
        ({}, "_-zk-controller_testbed", "zk-controller_testbed"),
        ({"COMPOSE_PROJECT_NAME": ""}, "main", "main"),
    ],
)
def test_the_default_project_is_named_as_compose_names_it(
    env: dict[str, str], directory: str, expected: str
) -> None:
    assert default_project(env, Path("/somewhere") / directory) == expected


def test_heal_with_no_pointer_has_nothing_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["heal", "--project", "p", "--state-dir", str(tmp_path)]) == 0
    assert "nothing to heal for project p" in capsys.readouterr().out


def test_heal_with_an_unreadable_pointer_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pointer_path(tmp_path, "p").write_text("{")
    assert main(["heal", "--project", "p", "--state-dir", str(tmp_path)]) == 1
    assert "is not JSON" in capsys.readouterr().err


def test_heal_drops_state_files_that_are_gone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pointer = pointer_path(tmp_path, "p")
    pointer.write_text(json.dumps({"project": "p", "state_files": [str(tmp_path / "x.json")]}))
    assert main(["heal", "--project", "p", "--state-dir", str(tmp_path)]) == 0
    assert "dropped 1 state file" in capsys.readouterr().out
    assert not pointer.exists()


@pytest.mark.parametrize("argv", [[], ["cure"], ["heal", "--projct", "p"]])
def test_usage_errors_exit_with_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2


def test_help_runs_as_a_module() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "chaos", "heal", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "--project" in result.stdout
    assert "--state-dir" in result.stdout
