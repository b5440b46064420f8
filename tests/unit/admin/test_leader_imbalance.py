"""`admin.leader_imbalance`: the share of its preferred partitions a broker does not lead."""

from __future__ import annotations

from admin import imbalance_ratios
from domain import TopicPartition

T0, T1, T2, T3 = (TopicPartition("t", p) for p in range(4))
ASSIGNMENT = {T0: (1, 2), T1: (2, 1), T2: (1, 3), T3: (3, 1)}


def test_imbalance_ratio_per_preferred_broker() -> None:
    ratios = imbalance_ratios(ASSIGNMENT, {T0: 2, T1: 2, T2: 1, T3: 1})
    assert ratios == {1: (0.5, [T0]), 2: (0.0, []), 3: (1.0, [T3])}


def test_a_broker_that_leads_none_of_its_partitions_is_fully_imbalanced() -> None:
    assert imbalance_ratios({T0: (1, 2), T1: (1, 3)}, {T0: 2, T1: 3}) == {1: (1.0, [T0, T1])}


def test_partitions_without_replicas_or_leader_do_not_count_against_a_broker() -> None:
    assert imbalance_ratios({T0: (), T1: (1, 2)}, {}) == {1: (0.0, [])}
