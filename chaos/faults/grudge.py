"""Partitions as grudges (pure; no I/O), in the manner of Jepsen's nemesis.

A grudge maps a node to the set of nodes whose packets it drops: `{"b": {"a"}}` means b
drops everything that arrives from a. Over TCP a one-way grudge still breaks the link both
ways (the handshake needs both directions), but the rules stay one-sided, as Jepsen's do.

Builders (nodes are service names; order matters where it says so):

| builder | cut |
| --- | --- |
| `halves(nodes, rng)` | the first half from the second (shuffled first when `rng` is given) |
| `isolate(node, nodes)` | one node from all others |
| `majorities_ring(nodes)` | a ring; each sees a majority around it, no two the same |
| `bridge(nodes)` | two halves, joined by one node that sees both |
| `one_way(sources, sinks)` | every sink drops what comes from every source |
| `complete(components)` | each node drops every node outside its component |

`drop_rules(grudge, ips)` turns a grudge into each dropping node's rules; `merge(grudges)`
is the grudge that cuts every link any of them cuts (faults active at the same time).

Errors: `GrudgeError` (a `chaos.errors.FaultError`, and a `ValueError`) for a grudge that
cannot be built.

Thread-safety: pure functions; any thread.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence

from chaos.errors import FaultError
from chaos.faults.rules import Rule, drop_from

Grudge = Mapping[str, frozenset[str]]


class GrudgeError(FaultError, ValueError):
    """The nodes do not admit the requested grudge."""


def _distinct(nodes: Sequence[str], least: int, name: str) -> list[str]:
    listed = list(nodes)
    if len(set(listed)) != len(listed):
        raise GrudgeError(f"{name}: nodes repeat: {listed}")
    if len(listed) < least:
        raise GrudgeError(f"{name} needs at least {least} nodes, got {listed}")
    return listed


def complete(components: Iterable[Iterable[str]]) -> dict[str, frozenset[str]]:
    """Each node drops every node that is not in its own component."""
    parts = [frozenset(c) for c in components]
    everyone = frozenset().union(*parts)
    if sum(len(p) for p in parts) != len(everyone):
        raise GrudgeError(f"components overlap: {[sorted(p) for p in parts]}")
    return {node: everyone - part for part in parts for node in part}


def halves(nodes: Sequence[str], rng: random.Random | None = None) -> dict[str, frozenset[str]]:
    """Cut the first half (the smaller one for an odd count) from the second; with `rng`
    the nodes are shuffled first."""
    listed = _distinct(nodes, 2, "halves")
    if rng is not None:
        rng.shuffle(listed)
    middle = len(listed) // 2
    return complete([listed[:middle], listed[middle:]])


def isolate(node: str, nodes: Sequence[str]) -> dict[str, frozenset[str]]:
    """Cut `node` from every other node."""
    listed = _distinct(nodes, 2, "isolate")
    if node not in listed:
        raise GrudgeError(f"isolate: {node!r} is not one of {listed}")
    return complete([[node], [n for n in listed if n != node]])


def majorities_ring(nodes: Sequence[str]) -> dict[str, frozenset[str]]:
    """Nodes in a ring, each seeing itself and its neighbours up to the smallest radius
    that makes a majority; it drops the rest. Symmetric, every node sees a majority, and
    no two nodes see the same set. Three nodes cannot be cut that way (a radius of one
    already sees everyone), so it needs four or more."""
    listed = _distinct(nodes, 4, "majorities-ring")
    count = len(listed)
    majority = count // 2 + 1
    radius = majority // 2
    grudge = {}
    for i, node in enumerate(listed):
        seen = {listed[(i + step) % count] for step in range(-radius, radius + 1)}
        grudge[node] = frozenset(listed) - seen
    return grudge


def bridge(nodes: Sequence[str]) -> dict[str, frozenset[str]]:
    """Two halves cut from each other, except the first node of the second half, which
    sees (and is seen by) everyone."""
    listed = _distinct(nodes, 3, "bridge")
    middle = len(listed) // 2
    between = listed[middle]
    grudge = complete([listed[:middle], listed[middle + 1 :]])
    grudge[between] = frozenset()
    return grudge


def one_way(sources: Iterable[str], sinks: Iterable[str]) -> dict[str, frozenset[str]]:
    """Every sink drops the packets of every source (and nothing else)."""
    froms, tos = frozenset(sources), frozenset(sinks)
    if froms & tos:
        raise GrudgeError(f"one-way: {sorted(froms & tos)} both source and sink")
    return {sink: froms for sink in tos}


def cut(grudge: Grudge, a: str, b: str) -> bool:
    """Whether TCP between `a` and `b` is broken: either drops the other's packets."""
    return b in grudge.get(a, frozenset()) or a in grudge.get(b, frozenset())


def sees(grudge: Grudge, node: str, nodes: Iterable[str]) -> frozenset[str]:
    """The nodes (itself included) that `node` exchanges packets with both ways."""
    return frozenset(n for n in nodes if n == node or not cut(grudge, node, n))


def merge(grudges: Iterable[Grudge]) -> dict[str, frozenset[str]]:
    """One grudge in which each node drops what it drops in any of `grudges`."""
    merged: dict[str, frozenset[str]] = {}
    for grudge in grudges:
        for node, dropped in grudge.items():
            merged[node] = merged.get(node, frozenset()) | frozenset(dropped)
    return merged


def drop_rules(grudge: Grudge, ips: Mapping[str, str]) -> dict[str, tuple[Rule, ...]]:
    """Each dropping node's rules: an INPUT drop per source address (sources sorted)."""
    missing = sorted({n for dst, srcs in grudge.items() for n in (dst, *srcs)} - set(ips))
    if missing:
        raise GrudgeError(f"no address for {missing}")
    return {
        dst: tuple(drop_from(ips[src]) for src in sorted(srcs))
        for dst, srcs in sorted(grudge.items())
        if srcs
    }


GRUDGES: Mapping[
    str, Callable[[Sequence[str], random.Random | None], dict[str, frozenset[str]]]
] = {
    "halves": halves,
    "isolate": lambda nodes, _rng: isolate(nodes[0] if nodes else "", nodes),
    "majorities-ring": lambda nodes, _rng: majorities_ring(nodes),
    "bridge": lambda nodes, _rng: bridge(nodes),
}
"""The grudges a `partition` fault may name, each built from its (ordered) services and
the fault's seeded rng (None: the given order); `isolate` cuts the first service from the others."""
