"""`Leftovers`: what it names, and that only an empty one is clean."""

from __future__ import annotations

from chaos.cluster.leftovers import Leftovers


def test_an_empty_leftovers_is_clean() -> None:
    assert not Leftovers()
    assert Leftovers().describe() == "nothing"
    assert Leftovers().topics == ()


def test_each_kind_alone_is_in_flight() -> None:
    assert Leftovers(reassigning=("t-0",))
    assert Leftovers(deleting=("t",))
    assert Leftovers(electing=True)
    assert Leftovers(unreadable=("/admin/reassign_partitions: bad json",))


def test_topics_come_from_partitions_and_deletions_with_dashes_kept() -> None:
    found = Leftovers(("chaos-random-ab12cd-side-3", "chaos-random-ab12cd-side-10"), ("old",))
    assert found.topics == ("chaos-random-ab12cd-side", "old")


def test_many_partitions_are_named_up_to_six_and_counted_beyond() -> None:
    partitions = tuple(f"t-{p}" for p in range(9))
    assert Leftovers(partitions).describe() == (
        "reassigning t-0, t-1, t-2, t-3, t-4, t-5 and 3 more"
    )
