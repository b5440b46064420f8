"""The Mann-Whitney U rank test, one-sided: is the second sample larger than the first
beyond what shuffling the pooled values would give? (`python -m chaos compare` asks it of
each recovery figure: are the head build's times larger than the base build's.)

Ties get mid-ranks. With at most `EXACT_MAX` values in all, the p-value is exact: the
share of all ways of splitting the pooled values into groups of the two sizes whose U is
at least the observed one (exact with ties too, conditional on them). Larger samples use
the normal approximation with the tie correction of the variance and a continuity
correction of 0.5, as scipy's `mannwhitneyu(..., method="asymptotic")` does.

Pure functions; any thread.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["EXACT_MAX", "RankTest", "mann_whitney_greater", "midranks"]

#: The most values (both samples) for which the p-value is counted exactly.
EXACT_MAX = 20


@dataclass(frozen=True, slots=True)
class RankTest:
    """The outcome: U of the second sample, the one-sided p-value, and whether it was
    counted exactly."""

    u: float
    p: float
    exact: bool


def midranks(values: Sequence[float]) -> list[float]:
    """The rank of each value among `values` (1-based), equal values sharing the mean of
    the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        shared = (start + end) / 2 + 1
        for position in range(start, end + 1):
            ranks[order[position]] = shared
        start = end + 1
    return ranks


def mann_whitney_greater(
    first: Sequence[float], second: Sequence[float], exact_max: int = EXACT_MAX
) -> RankTest:
    """The test that `second` tends to be larger than `first`, exact up to `exact_max`
    values in all; `ValueError` when either sample is empty or holds a NaN."""
    if not first or not second:
        raise ValueError("the rank test needs at least one value in each sample")
    pooled = [float(v) for v in (*first, *second)]
    if any(math.isnan(v) for v in pooled):
        raise ValueError("the rank test takes no NaN")
    n1, n2 = len(first), len(second)
    ranks = midranks(pooled)
    offset = n2 * (n2 + 1) / 2
    u = sum(ranks[n1:]) - offset
    if n1 + n2 <= exact_max:
        total = 0
        at_least = 0
        for chosen in itertools.combinations(ranks, n2):
            total += 1
            if sum(chosen) - offset >= u - 1e-9:
                at_least += 1
        return RankTest(u, at_least / total, exact=True)
    mean = n1 * n2 / 2
    ties = _tie_term(pooled)
    n = n1 + n2
    variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if variance <= 0:
        return RankTest(u, 1.0, exact=False)
    z = (u - mean - 0.5) / math.sqrt(variance)
    return RankTest(u, 0.5 * math.erfc(z / math.sqrt(2)), exact=False)


def _tie_term(values: Sequence[float]) -> float:
    """Sum of t^3 - t over each group of t equal values."""
    counts: dict[float, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return float(sum(t**3 - t for t in counts.values()))
