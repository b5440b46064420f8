"""The Mann-Whitney rank test on samples whose answers are known: scipy's documented
example (exact and asymptotic), complete separation, ties, and bad input."""

from __future__ import annotations

import math

import pytest

from chaos.compare.ranks import EXACT_MAX, mann_whitney_greater, midranks

# scipy.stats.mannwhitneyu's documentation: ages of male and female staff; U = 17,
# two-sided p = 0.1111 exactly (= 2 * 7/126) and 0.11134688653314041 asymptotically.
MALES = (19, 22, 16, 29, 24)
FEMALES = (20, 11, 17, 12)


def test_midranks_share_the_ranks_of_ties() -> None:
    assert midranks([3.0, 1.0, 3.0, 2.0]) == [3.5, 1.0, 3.5, 2.0]
    assert midranks([5.0, 5.0, 5.0]) == [2.0, 2.0, 2.0]


def test_the_exact_p_value_of_scipys_example() -> None:
    found = mann_whitney_greater(FEMALES, MALES)
    assert found.exact
    assert found.u == 17
    assert found.p == pytest.approx(7 / 126)


def test_the_normal_approximation_of_scipys_example() -> None:
    first = FEMALES * 3  # the same ranks, tied in threes: > EXACT_MAX values
    second = MALES * 3
    assert len(first) + len(second) > EXACT_MAX
    found = mann_whitney_greater(first, second)
    assert not found.exact
    assert found.u == 17 * 9
    # by hand: sigma^2 = n1 n2 / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1)))
    n1, n2, n = 12, 15, 27
    variance = n1 * n2 / 12 * ((n + 1) - 9 * (27 - 3) / (n * (n - 1)))
    z = (17 * 9 - n1 * n2 / 2 - 0.5) / math.sqrt(variance)
    assert found.p == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)))


def test_the_asymptotic_p_of_scipys_example() -> None:
    found = mann_whitney_greater(FEMALES, MALES, exact_max=0)
    assert not found.exact
    assert found.p == pytest.approx(0.11134688653314041 / 2)


def test_three_seeds_all_slower_is_the_smallest_p() -> None:
    assert mann_whitney_greater([1, 2, 3], [4, 5, 6]).p == pytest.approx(1 / 20)
    assert mann_whitney_greater([4, 5, 6], [1, 2, 3]).p == 1.0


def test_equal_samples_are_no_evidence() -> None:
    assert mann_whitney_greater([7, 7, 7], [7, 7, 7]).p == 1.0


def test_bad_samples_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one value"):
        mann_whitney_greater([], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        mann_whitney_greater([1.0], [math.nan])
