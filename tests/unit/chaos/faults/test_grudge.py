"""Grudges: each builder on 3, 5 and 6 nodes, symmetry, and the rules they become."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chaos.faults.grudge import (
    GRUDGES,
    Grudge,
    GrudgeError,
    bridge,
    complete,
    cut,
    drop_rules,
    halves,
    isolate,
    majorities_ring,
    merge,
    one_way,
    sees,
)
from chaos.faults.rules import Hook, Rule

SIZES = [3, 5, 6]


def nodes(count: int) -> list[str]:
    return [f"n{i}" for i in range(1, count + 1)]


def symmetric(grudge: Grudge) -> bool:
    return all(dst in grudge.get(src, frozenset()) for dst, srcs in grudge.items() for src in srcs)


def no_self_grudge(grudge: Grudge) -> bool:
    return all(dst not in srcs for dst, srcs in grudge.items())


@pytest.mark.parametrize("count", SIZES)
def test_halves_cut_the_first_half_from_the_second(count: int) -> None:
    listed = nodes(count)
    grudge = halves(listed)
    first, second = listed[: count // 2], listed[count // 2 :]
    for a in first:
        assert grudge[a] == frozenset(second)
    for b in second:
        assert grudge[b] == frozenset(first)
    assert symmetric(grudge)
    assert no_self_grudge(grudge)


@pytest.mark.parametrize("count", SIZES)
def test_seeded_halves_are_a_shuffled_cut_and_repeat_with_the_seed(count: int) -> None:
    listed = nodes(count)
    grudge = halves(listed, random.Random(7))
    assert grudge == halves(listed, random.Random(7))
    sides = {frozenset(sees(grudge, n, listed)) for n in listed}
    assert sorted(len(s) for s in sides) == sorted([count // 2, count - count // 2])
    assert symmetric(grudge)


def test_halves_do_not_shuffle_the_callers_list() -> None:
    listed = nodes(6)
    halves(listed, random.Random(1))
    assert listed == nodes(6)


@pytest.mark.parametrize("count", SIZES)
def test_isolate_cuts_one_node_from_all_others(count: int) -> None:
    listed = nodes(count)
    grudge = isolate("n2", listed)
    assert grudge["n2"] == frozenset(listed) - {"n2"}
    for other in listed:
        if other != "n2":
            assert grudge[other] == frozenset({"n2"})
            assert sees(grudge, other, listed) == frozenset(listed) - {"n2"}
    assert symmetric(grudge)


def test_isolate_refuses_a_node_not_in_the_list() -> None:
    with pytest.raises(GrudgeError, match="n9"):
        isolate("n9", nodes(3))


@pytest.mark.parametrize("count", [5, 6])
def test_majorities_ring_each_node_sees_a_distinct_overlapping_majority(count: int) -> None:
    listed = nodes(count)
    grudge = majorities_ring(listed)
    seen = [sees(grudge, n, listed) for n in listed]
    assert all(len(s) > count / 2 for s in seen)
    assert all(len(s) < count for s in seen), "every node must lose someone"
    assert len(set(seen)) == count, "no two nodes see the same majority"
    assert all(a & b for a in seen for b in seen)
    assert symmetric(grudge)
    assert no_self_grudge(grudge)


def test_majorities_ring_of_five_sees_the_two_ring_neighbours() -> None:
    grudge = majorities_ring(nodes(5))
    assert grudge["n1"] == frozenset({"n3", "n4"})
    assert grudge["n3"] == frozenset({"n1", "n5"})


def test_majorities_ring_needs_four_nodes() -> None:
    with pytest.raises(GrudgeError, match="at least 4"):
        majorities_ring(nodes(3))


@pytest.mark.parametrize("count", SIZES)
def test_bridge_node_sees_both_halves_that_do_not_see_each_other(count: int) -> None:
    listed = nodes(count)
    grudge = bridge(listed)
    middle = listed[count // 2]
    left, right = listed[: count // 2], listed[count // 2 + 1 :]
    assert sees(grudge, middle, listed) == frozenset(listed)
    for a in left:
        for b in right:
            assert cut(grudge, a, b)
    for a in left:
        assert sees(grudge, a, listed) == frozenset([*left, middle])
    assert symmetric(grudge)


@pytest.mark.parametrize("count", SIZES)
def test_one_way_grudge_drops_only_from_the_sources(count: int) -> None:
    listed = nodes(count)
    grudge = one_way(listed[:1], listed[1:])
    assert set(grudge) == set(listed[1:])
    assert all(srcs == frozenset(listed[:1]) for srcs in grudge.values())
    assert "n1" not in grudge
    assert not symmetric(grudge)
    assert all(cut(grudge, "n1", other) for other in listed[1:])


def test_one_way_refuses_a_node_on_both_sides() -> None:
    with pytest.raises(GrudgeError, match="n1"):
        one_way(["n1"], ["n1", "n2"])


def test_complete_refuses_overlapping_components() -> None:
    with pytest.raises(GrudgeError, match="overlap"):
        complete([["a", "b"], ["b", "c"]])


@pytest.mark.parametrize("name", sorted(GRUDGES))
def test_every_named_grudge_refuses_repeated_nodes(name: str) -> None:
    with pytest.raises(GrudgeError, match="repeat"):
        GRUDGES[name](["a", "b", "a", "c", "d"], None)


@pytest.mark.parametrize("name", sorted(GRUDGES))
def test_every_named_grudge_on_six_nodes_cuts_something_and_keeps_nodes(name: str) -> None:
    listed = nodes(6)
    grudge = GRUDGES[name](listed, None)
    assert set(grudge) <= set(listed)
    assert any(grudge.values())
    assert no_self_grudge(grudge)


def test_named_isolate_cuts_the_first_service() -> None:
    assert GRUDGES["isolate"](["b", "a", "c"], None)["b"] == frozenset({"a", "c"})


def test_drop_rules_drop_each_source_address_at_the_destination() -> None:
    grudge = {"a": frozenset({"c", "b"}), "b": frozenset(), "c": frozenset({"a"})}
    ips = {"a": "10.0.0.1", "b": "10.0.0.2", "c": "10.0.0.3"}
    rules = drop_rules(grudge, ips)
    assert rules == {
        "a": (
            Rule(Hook.IN, ("-s", "10.0.0.2/32", "-j", "DROP")),
            Rule(Hook.IN, ("-s", "10.0.0.3/32", "-j", "DROP")),
        ),
        "c": (Rule(Hook.IN, ("-s", "10.0.0.1/32", "-j", "DROP")),),
    }


def test_drop_rules_refuse_a_node_without_an_address() -> None:
    with pytest.raises(GrudgeError, match="'c'"):
        drop_rules({"a": frozenset({"c"})}, {"a": "10.0.0.1"})


@given(st.integers(min_value=2, max_value=12), st.integers(min_value=0, max_value=2**32))
def test_halves_always_split_into_two_mutually_blind_sides(count: int, seed: int) -> None:
    listed = nodes(count)
    grudge = halves(listed, random.Random(seed))
    assert symmetric(grudge)
    sides = {sees(grudge, n, listed) for n in listed}
    assert len(sides) == 2
    first, second = sides
    assert first.isdisjoint(second)
    assert first | second == frozenset(listed)


@given(st.integers(min_value=4, max_value=15))
def test_majorities_ring_properties_hold_for_any_size(count: int) -> None:
    listed = nodes(count)
    grudge = majorities_ring(listed)
    seen = [sees(grudge, n, listed) for n in listed]
    assert symmetric(grudge)
    assert all(count / 2 < len(s) < count for s in seen)
    assert len(set(seen)) == count


def test_merge_cuts_every_link_any_grudge_cuts() -> None:
    nodes = ["a", "b", "c", "d"]
    first, second = isolate("a", nodes), one_way(["d"], ["c"])
    merged = merge([first, second, {}])
    for x in nodes:
        for y in nodes:
            assert cut(merged, x, y) == (cut(first, x, y) or cut(second, x, y))
    assert merged["c"] == frozenset({"a", "d"})
    assert merge([]) == {}
