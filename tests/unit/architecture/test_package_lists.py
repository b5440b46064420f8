"""The lists of the project's top-level packages agree with the tree: the Makefile's type
check, the wheel's packages, the import contracts' roots and cycle check, and the broker
image, which carries the packages the broker and the `testbed` CLI import and no others (a
package missing there fails only when a container starts)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import grimp

REPO_ROOT = Path(__file__).resolve().parents[3]
GENERATED = "testbed_rpc"
PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def _packages() -> set[str]:
    return {
        path.parent.name
        for path in REPO_ROOT.glob("*/__init__.py")
        if path.parent.name not in {GENERATED, "tests"} and not path.parent.name.startswith(".")
    }


def _makefile_packages() -> set[str]:
    found = re.search(r"^PACKAGES := (.*)$", (REPO_ROOT / "Makefile").read_text(), re.MULTILINE)
    assert found, "the Makefile has no PACKAGES line"
    return set(found.group(1).split())


def _image_packages() -> set[str]:
    script = (REPO_ROOT / "scripts" / "build-images.sh").read_text()
    found = re.search(r"^for pkg in (.*); do$", script, re.MULTILINE)
    assert found, "scripts/build-images.sh has no `for pkg in ...` line"
    return set(found.group(1).split())


def test_the_tree_has_packages() -> None:
    assert {"controller", "broker_node", "chaos", "rundir"} <= _packages()


def test_the_makefile_type_checks_every_package() -> None:
    assert _makefile_packages() == _packages()


def test_the_wheel_holds_every_package() -> None:
    include = set(PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"])
    assert include == {f"{name}*" for name in _packages() | {GENERATED}}


def test_the_import_contracts_cover_every_package() -> None:
    linter = PYPROJECT["tool"]["importlinter"]
    assert set(linter["root_packages"]) == _packages() | {GENERATED}
    acyclic = [c for c in linter["contracts"] if c["type"] == "acyclic_siblings"]
    assert [set(c["ancestors"]) for c in acyclic] == [_packages()]


def test_the_broker_image_carries_what_its_programs_import() -> None:
    graph = grimp.build_graph(*sorted(_packages()), GENERATED)
    needed = {"broker_node", "testbed"}
    for program in sorted(needed):
        imported = graph.find_upstream_modules(program, as_package=True)
        needed |= {module.split(".")[0] for module in imported}
    assert _image_packages() == needed
