"""`testbed topics alter` without ZooKeeper: the output line and the parser."""

from __future__ import annotations

import pytest

from testbed.arguments import build_parser
from testbed.topics import render_added

# -- output and arguments -----------------------------------------------------------------


def test_added_line_names_the_range() -> None:
    assert render_added("orders", [5, 3, 4]) == "Added partitions 3..5 to topic orders."


def test_added_line_for_one_partition() -> None:
    assert render_added("orders", [3]) == "Added partition 3 to topic orders."


def test_alter_arguments() -> None:
    args = build_parser().parse_args(
        ["topics", "alter", "--topic", "t", "--partitions", "4", "--replica-assignment", "1,2"]
    )
    assert (args.action, args.topic, args.partitions, args.replica_assignment) == (
        "alter",
        "t",
        4,
        "1,2",
    )


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["--topic", "t"], id="no-partitions"),
        pytest.param(["--partitions", "4"], id="no-topic"),
        pytest.param(["--topic", "t", "--partitions", "four"], id="partitions-not-an-integer"),
    ],
)
def test_bad_alter_arguments_exit_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["topics", "alter", *argv])
    assert info.value.code == 2
