"""Which rack information a replica assignment may use, as Kafka 2.8's admin tools decide it
(`RackAwareMode` and `AdminZkClient.getBrokerMetadatas`), and the rack-alternated broker
order that Kafka's rack-aware assignment walks (`AdminUtils.getRackAlternatedBrokerList`).

A broker's rack is what it registered under `rack` in `/brokers/ids/N` (None when it
registered none). Brokers are always taken in ascending id order.

Pure: no I/O, logging or metrics. Any thread.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping

from admin.errors import AdminOperationError

__all__ = ["RackAwareMode", "broker_racks", "rack_alternated_brokers"]


class RackAwareMode(enum.Enum):
    """How an assignment treats racks (Kafka's `RackAwareMode`)."""

    #: Use racks; refuse when only some of the brokers have one (the tools' default).
    ENFORCED = "enforced"
    #: Use racks when every broker has one; otherwise assign as if none had.
    SAFE = "safe"
    #: Ignore racks (`--disable-rack-aware`).
    DISABLED = "disabled"


def broker_racks(
    registered: Mapping[int, str | None],
    mode: RackAwareMode = RackAwareMode.ENFORCED,
    brokers: Iterable[int] | None = None,
) -> dict[int, str | None]:
    """Broker id -> the rack the assignment may use, in ascending id order: the registered
    brokers (only those in `brokers` when it is given) with their racks, or with None
    everywhere when `mode` is DISABLED, or SAFE and some broker has no rack.

    Raises `AdminOperationError` when `mode` is ENFORCED and some, but not all, of those
    brokers have a rack: Kafka refuses to guess then.
    """
    wanted = None if brokers is None else set(brokers)
    chosen = {b: r for b, r in sorted(registered.items()) if wanted is None or b in wanted}
    without = [b for b, r in chosen.items() if r is None]
    if mode is RackAwareMode.ENFORCED and without and len(without) < len(chosen):
        raise AdminOperationError(
            f"Broker(s) {', '.join(str(b) for b in without)} registered no rack while the "
            "others did, so a rack-aware assignment is not possible; pass "
            "--disable-rack-aware to assign replicas without racks."
        )
    if mode is RackAwareMode.DISABLED or without:
        return dict.fromkeys(chosen)
    return chosen


def rack_alternated_brokers(racks: Mapping[int, str]) -> list[int]:
    """The brokers ordered so that consecutive ones sit on different racks where possible:
    racks are visited in name order, round and round, each giving its next broker (lowest
    id first) until every broker is placed; a rack that has run out is skipped."""
    by_rack: dict[str, list[int]] = {}
    for broker in sorted(racks):
        by_rack.setdefault(racks[broker], []).append(broker)
    queues = [by_rack[rack] for rack in sorted(by_rack)]
    longest = max((len(q) for q in queues), default=0)
    return [q[i] for i in range(longest) for q in queues if i < len(q)]
