"""Kafka's leader imbalance per broker: of the partitions a broker is the preferred leader
of, the share it does not lead. The controller's auto rebalance and any report of the
cluster's balance use the same figure.

Pure: no I/O, logging or metrics. Any thread.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from domain import TopicPartition

__all__ = ["imbalance_ratios"]


def imbalance_ratios(
    assignments: Mapping[TopicPartition, tuple[int, ...]],
    leaders: Mapping[TopicPartition, int],
) -> dict[int, tuple[float, list[TopicPartition]]]:
    """Per preferred broker: the share of the partitions it should lead that it does not,
    and those partitions (Kafka's leader imbalance per broker)."""
    by_preferred: dict[int, list[TopicPartition]] = defaultdict(list)
    for tp, replicas in assignments.items():
        if replicas:
            by_preferred[replicas[0]].append(tp)
    out: dict[int, tuple[float, list[TopicPartition]]] = {}
    for broker, partitions in sorted(by_preferred.items()):
        not_led = sorted(tp for tp in partitions if tp in leaders and leaders[tp] != broker)
        out[broker] = (len(not_led) / len(partitions), not_led)
    return out
