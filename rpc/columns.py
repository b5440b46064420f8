"""Partition states laid out in columns, as LeaderAndIsr and UpdateMetadata carry them on
the wire (`proto/testbed_rpc/control.proto`): one column per field, whose i-th value
belongs to the i-th state, with every distinct topic name and every distinct broker-id
list once, in tables the states point into by index.

`lay_out` makes the layout from a sequence of states (named tuples); the wire encodes it
(`rpc.wire.control`) and `rpc.sizes` counts its bytes from it, so both see the same
columns and tables. Every step is a pass in C (`zip`, `dict.fromkeys`, `map`): 100,000
states lay out in about 70 ms on a slow core, however many topics they name. The
controller sizes a request (to split it under gRPC's limit) and then encodes the same
tuple of states, so the layouts of the last few large tuples are kept by identity and
made once. Any thread.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, NamedTuple

__all__ = [
    "LEADER_AND_ISR",
    "UPDATE_METADATA",
    "Layout",
    "Shape",
    "lay_out",
]


class Shape(NamedTuple):
    """Which fields of a state type travel how: `topic` as an index into the topic names;
    `ints` as packed numbers; `lists` as indexes into the broker-id lists (always
    present); `optional_lists` the same, left out where every state has the empty list;
    `flags` as packed booleans, left out where every one is false. Field names are the
    state type's."""

    ints: tuple[str, ...]
    lists: tuple[str, ...]
    optional_lists: tuple[str, ...]
    flags: tuple[str, ...]


#: `rpc.messages.LeaderAndIsrPartitionState` on the wire (`LeaderAndIsrStates`).
LEADER_AND_ISR = Shape(
    ints=("partition", "controller_epoch", "leader", "leader_epoch", "zk_version"),
    lists=("isr", "replicas"),
    optional_lists=("adding_replicas", "removing_replicas"),
    flags=("is_new",),
)
#: `rpc.messages.UpdateMetadataPartitionState` on the wire (`UpdateMetadataStates`).
UPDATE_METADATA = Shape(
    ints=("partition", "controller_epoch", "leader", "leader_epoch", "zk_version"),
    lists=("isr", "replicas"),
    optional_lists=("offline_replicas",),
    flags=(),
)


@dataclass(frozen=True, slots=True)
class Layout:
    """States in columns. `topics` are the distinct topic names and `lists` the distinct
    broker-id lists, each in the order first named; `columns` maps `topic` and each list
    field to indexes into them, and each int and flag field to its values (an optional
    list or flag column is None when no state has a value for it)."""

    topics: tuple[str, ...]
    lists: tuple[tuple[int, ...], ...]
    columns: dict[str, Sequence[Any] | None]


def _positions(distinct: dict[Any, None]) -> Any:
    """A function from each of `distinct`'s keys to its position."""
    return {value: i for i, value in enumerate(distinct)}.__getitem__


#: Below this many states a layout is made again rather than kept.
KEEP_MIN = 100
#: How many layouts are kept (the controller's senders encode a few groups at once).
KEEP = 4


class _Kept:
    """The layouts of the last `KEEP` large tuples of states, by identity. A kept tuple is
    referenced, so its identity cannot pass to another while kept."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.layouts: OrderedDict[int, tuple[Sequence[Any], Shape, Layout]] = OrderedDict()


_kept = _Kept()


def lay_out(states: Sequence[NamedTuple], shape: Shape) -> Layout:
    """The column layout of `states` (all of one named-tuple type with `topic` and the
    fields `shape` names). Do not change a list passed here while it may be kept: pass
    tuples."""
    if len(states) < KEEP_MIN:
        return _lay_out(states, shape)
    with _kept.lock:
        kept = _kept.layouts.get(id(states))
    if kept is not None and kept[0] is states and kept[1] is shape:
        return kept[2]
    layout = _lay_out(states, shape)
    with _kept.lock:
        _kept.layouts[id(states)] = (states, shape, layout)
        while len(_kept.layouts) > KEEP:
            _kept.layouts.popitem(last=False)
    return layout


def _lay_out(states: Sequence[NamedTuple], shape: Shape) -> Layout:
    if not states:
        return Layout((), (), {})
    fields = type(states[0])._fields
    by_name = dict(zip(fields, zip(*states, strict=True), strict=True))
    topics = dict.fromkeys(by_name["topic"])
    columns: dict[str, Sequence[Any] | None] = {
        "topic": list(map(_positions(topics), by_name["topic"]))
    }
    columns.update((name, by_name[name]) for name in shape.ints)
    present = [
        *shape.lists,
        *(name for name in shape.optional_lists if any(by_name[name])),
    ]
    lists = dict.fromkeys(chain.from_iterable(by_name[name] for name in present))
    position = _positions(lists)
    for name in present:
        columns[name] = list(map(position, by_name[name]))
    for name in shape.optional_lists:
        columns.setdefault(name, None)
    for name in shape.flags:
        column = by_name[name]
        columns[name] = column if any(column) else None
    return Layout(tuple(topics), tuple(lists), columns)
