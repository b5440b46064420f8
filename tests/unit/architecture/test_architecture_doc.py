"""`docs/architecture.md` names every top-level package and every `testbed` subcommand, so
the page cannot fall behind the tree unnoticed."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed.arguments import build_parser

REPO_ROOT = Path(__file__).resolve().parents[3]
ARCHITECTURE = (REPO_ROOT / "docs" / "architecture.md").read_text()


def _packages() -> list[str]:
    return sorted(
        path.parent.name
        for path in REPO_ROOT.glob("*/__init__.py")
        if not path.parent.name.startswith(".")
    )


def _subcommands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                command = f"{prefix}{name}"
                nested = list(_subcommands(child, command + " "))
                yield from nested or [command]


def test_the_tree_has_packages_to_check() -> None:
    assert {"controller", "broker_node", "zkdata", "rpc", "testbed"} <= set(_packages())


@pytest.mark.parametrize("package", _packages())
def test_every_top_level_package_is_described(package: str) -> None:
    assert re.search(rf"^\| `{package}/` \|", ARCHITECTURE, re.MULTILINE), (
        f"docs/architecture.md has no row for the package `{package}/`"
    )


@pytest.mark.parametrize("command", sorted(_subcommands(build_parser())))
def test_every_cli_subcommand_is_named(command: str) -> None:
    assert f"`{command}`" in ARCHITECTURE, (
        f"docs/architecture.md does not name the CLI command `testbed {command}`"
    )
