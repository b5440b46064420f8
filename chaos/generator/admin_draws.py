"""The admin operations of a generic schedule (`chaos.generator.generic`, step 2), drawn
from the schedule's generator: `draw_actions(rng, topic, heal_at)`.

A side topic `<topic>-side` (replication factor 2, so a reassignment copies replicas) is
created early, maybe grown (`add-partitions`), maybe reassigned, maybe one of its
overrides altered (`alter-config`: unclean elections on or off, its min ISR), and deleted
before the heal; maybe preferred elections of the workload's topic (`elect-leaders`) and
a forced controller election (`move-controller`) come at drawn times. When the side topic
is not reassigned, one schedule in `VACATE_SHARE` retires a broker that is not the
controller (`vacate`: every replica of every topic moved off it, so that it stays
registered hosting nothing); one reassignment at a time runs in Kafka 2.x, and the side
topic's would hold the retirement up.

When the workload runs on pairs (replication factor 2 on three brokers, drawn by
`chaos.generator.replication`), a reassignment drawn moves, with probability
`WORKLOAD_REASSIGN_SHARE`, the workload's topic instead of the side topic, at the same
time and shift: a reassignment under the load, whose records every invariant then
follows (a shift on three replicas of three brokers moves no replica).

The retirement and the choice of topic are drawn from generators of their own, seeded
from the schedule generator's state at that point without advancing it, so that they
left every other draw of every seed as it was: a seed recorded by a hunt or a soak before
them names the same schedule, the retirement added or the topic changed where drawn.
Pure; any thread.
"""

from __future__ import annotations

import random

from chaos.faults.params import Scalar
from chaos.generator.action_kinds import CONFIG_KEYS, CONFIG_VALUES
from chaos.generator.schedule import Action
from chaos.generator.timings import OP_GAP

__all__ = [
    "CONFIG_SHARE",
    "VACATE_SHARE",
    "WORKLOAD_REASSIGN_SHARE",
    "draw_actions",
    "is_side_topic",
    "side_topic",
]

#: The chance that the side topic's config is altered while it lives.
CONFIG_SHARE = 0.4
#: The chance that a schedule whose side topic is not reassigned retires a broker.
VACATE_SHARE = 0.3
#: What a side topic's name ends with.
_SIDE = "-side"
#: Mixed into the retirement's seed.
_VACATE_SALT = 0x7ACA7E
#: The chance that, on pairs, the reassignment drawn moves the workload's topic.
WORKLOAD_REASSIGN_SHARE = 0.5
#: Mixed into that draw's seed.
_WORKLOAD_SALT = 0x3E3A55


def side_topic(topic: str) -> str:
    """The side topic the admin operations act on."""
    return f"{topic}{_SIDE}"


def is_side_topic(name: str) -> bool:
    """Whether `name` is a side topic (`side_topic` of some topic)."""
    return name.endswith(_SIDE)


def draw_actions(
    rng: random.Random, topic: str, heal_at: float, pairs: bool = False
) -> list[Action]:
    """The admin operations (see the module docstring), sorted by time: the side topic's
    always end in its deletion, at least `OP_GAP.low` after the operation before it and
    10 s before the heal (operations that leave no room for it are left out). With
    `pairs` (the workload on two replicas of three brokers), maybe the workload's topic
    is reassigned in the side topic's place."""
    side, latest = side_topic(topic), heal_at - 10
    t = round(rng.uniform(2, 6), 1)
    ops = [Action(t, "create-topic", _items(topic=side, partitions=3, replication_factor=2))]
    if rng.random() < 0.5:
        t = round(t + OP_GAP.draw(rng), 1)
        grown = _items(topic=side, partitions=rng.choice((4, 6)))
        ops.append(Action(t, "add-partitions", grown))
    if rng.random() < 0.7:
        t = round(t + OP_GAP.draw(rng), 1)
        ops.append(Action(t, "reassign", _items(topic=side, shift=rng.choice((1, 2)))))
    if rng.random() < CONFIG_SHARE:
        t = round(t + OP_GAP.draw(rng), 1)
        key = rng.choice(CONFIG_KEYS)
        value = rng.choice(CONFIG_VALUES[key])
        ops.append(Action(t, "alter-config", _items(topic=side, key=key, value=value)))
    gap = OP_GAP.draw(rng)
    while ops and ops[-1].at_s + OP_GAP.low > latest:
        ops.pop()
    if ops:
        at = round(min(ops[-1].at_s + gap, latest), 1)
        ops.append(Action(at, "delete-topic", _items(topic=side)))
    if rng.random() < 0.5:
        at = round(rng.uniform(5, latest), 1)
        ops.append(Action(at, "elect-leaders", _items(topic=topic)))
    if rng.random() < 0.4:
        ops.append(Action(round(rng.uniform(5, latest), 1), "move-controller"))
    state = hash(rng.getstate()[1])
    if not any(a.kind == "reassign" for a in ops):
        ops += _retirement(random.Random(state ^ _VACATE_SALT), latest)
    elif pairs and random.Random(state ^ _WORKLOAD_SALT).random() < WORKLOAD_REASSIGN_SHARE:
        ops = [_on(topic, a) if a.kind == "reassign" else a for a in ops]
    return sorted((a for a in ops if a.at_s <= latest), key=lambda a: a.at_s)


def _retirement(rng: random.Random, latest: float) -> list[Action]:
    """Maybe a `vacate` of one of the two brokers that are not the controller."""
    if latest <= 5 or rng.random() >= VACATE_SHARE:
        return []
    broker = f"non-controller:{rng.choice((1, 2))}"
    return [Action(round(rng.uniform(5, latest), 1), "vacate", _items(broker=broker))]


def _on(topic: str, reassign: Action) -> Action:
    """`reassign` moving `topic` instead, at the same time and shift."""
    return Action(reassign.at_s, reassign.kind, _items(topic=topic, shift=reassign.param("shift")))


def _items(**params: Scalar) -> tuple[tuple[str, Scalar], ...]:
    return tuple(params.items())
