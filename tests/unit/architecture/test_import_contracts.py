"""The import contracts in `pyproject.toml` ([tool.importlinter]) hold for the tree, and a
forbidden import breaks the tests with the name of the contract it breaks.

Each probe copies the packages into a temporary directory, adds one import that a contract
forbids, and runs `lint-imports` there (on the test's thread, as a child process).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
CONFIG = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
CONTRACTS = [contract["name"] for contract in CONFIG["contracts"]]


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_tree_keeps_every_contract() -> None:
    result = _lint(REPO_ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    for name in CONTRACTS:
        assert f"{name} KEPT" in result.stdout


@pytest.fixture(scope="module")
def tree_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The root packages and pyproject.toml, copied once for every probe."""
    root = tmp_path_factory.mktemp("tree")
    for package in CONFIG["root_packages"]:
        shutil.copytree(
            REPO_ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(REPO_ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.mark.parametrize(
    ("module", "statement", "contract"),
    [
        ("zkdata/paths.py", "import controller.events", "Layers"),
        ("domain/values.py", "import zkdata.paths", "Domain values import no other"),
        ("domain/values.py", "import eventlog.log", "Domain values import no other"),
        ("controller/events.py", "import broker_node.config", "Layers"),
        ("chaos/__init__.py", "import controller.events", "Tools never import"),
        ("rundir/layout.py", "import broker_node.partition", "Tools never import"),
        ("pipeline/__init__.py", "import chaos", "The report never imports the fault injector"),
        (
            "pipeline/runs.py",
            "import chaos.run.runner",
            "The report never imports the fault injector",
        ),
        ("rundir/__init__.py", "import chaos", "The run-directory contract imports none"),
        ("rundir/results.py", "import pipeline", "The run-directory contract imports none"),
        ("rundir/history.py", "import bench", "The run-directory contract imports none"),
        ("rundir/reader.py", "import harness", "The run-directory contract imports none"),
        ("chaos/__init__.py", "import pipeline", "Layers"),
        ("pipeline/__init__.py", "import bench", "Layers"),
        ("harness/__init__.py", "import testbed", "Layers"),
        ("eventlog/__init__.py", "import rundir", "Layers"),
        ("chaos/cluster/roles.py", "import chaos.faults.registry", "Chaos by role"),
        ("chaos/faults/base.py", "import chaos.run.injector", "Chaos by role"),
        ("chaos/client/producer.py", "import chaos.faults.base", "Chaos by role"),
        ("chaos/run/actions.py", "import testbed.topics", "through admin, not the CLI"),
        ("chaos/generator/generic.py", "import chaos.hunt.reach_shapes", "the bug shapes"),
        ("chaos/hunt/corpus.py", "import chaos.hunt.reach_shapes", "the bug shapes"),
        ("bench/produce/throughput.py", "import testbed.topics", "through admin, not the CLI"),
        ("testbed/zk_tree.py", "import broker_node.partition", "Tools never import"),
        ("controller/context.py", "import testbed_rpc.control_pb2", "generated protobuf"),
        ("broker_node/partition.py", "import grpc", "Only rpc imports grpc"),
        ("controller/states.py", "import controller.context", "No import cycles"),
        ("broker_node/fetcher.py", "import broker_node.replica_manager", "FetcherTarget"),
        ("broker_node/fetcher.py", "import broker_node.partition", "FetcherTarget"),
        ("bench/shared/report.py", "import bench.produce.options", "Benchmark families"),
        ("bench/produce/phases.py", "import bench.control.layout", "Benchmark families"),
        ("bench/pipeline/options.py", "import bench.produce.options", "Benchmark families"),
        ("broker_node/fetcher_manager.py", "import broker_node.partition", "FetcherTarget"),
    ],
)
def test_a_forbidden_import_breaks_its_contract(
    tree_copy: Path, module: str, statement: str, contract: str
) -> None:
    path = tree_copy / module
    original = path.read_text()
    path.write_text(original + f"\n{statement}  # noqa\n")
    try:
        result = _lint(tree_copy)
    finally:
        path.write_text(original)
    assert result.returncode != 0
    broken = [name for name in CONTRACTS if f"{name} BROKEN" in result.stdout]
    assert any(contract in name for name in broken), result.stdout
