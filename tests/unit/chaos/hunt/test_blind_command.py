"""`python -m chaos hunt`'s arguments: the switches by name (all of the catalog when none
are named), its defaults, and the usage errors it raises before touching Docker."""

from __future__ import annotations

import pytest

from bugs import CATALOG
from chaos.__main__ import build_parser, main
from chaos.hunt.blind import DEFAULT_RUN_S
from chaos.hunt.blind_command import DEFAULT_PROJECT, switches_named
from chaos.hunt.command import HuntUsageError


def test_every_switch_of_the_catalog_by_default_and_the_named_ones_in_order() -> None:
    assert switches_named("") == tuple(bug.name for bug in CATALOG)
    assert switches_named(" kip-380,unclean-election,kip-380 ") == ("kip-380", "unclean-election")


def test_an_unknown_switch_is_a_usage_error_naming_it() -> None:
    with pytest.raises(HuntUsageError, match="no bug switch kafka-0"):
        switches_named("kip-380,kafka-0")


def test_the_defaults() -> None:
    args = build_parser().parse_args(["hunt"])
    assert (args.runs, args.run_seconds, args.hunt_seed) == (10, DEFAULT_RUN_S, 1)
    assert args.project == DEFAULT_PROJECT


@pytest.mark.parametrize(
    "argv",
    [
        ["hunt", "--bugs", "nope"],
        ["hunt", "--runs", "0"],
        ["hunt", "--run-seconds", "20"],
        ["hunt", "--seeds", "1,x"],
        ["hunt", "--project", "cov"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPOSE_PROJECT_NAME", "cov")
    assert main(argv) == 2
