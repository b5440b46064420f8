"""Splitting a control request into parts that each encode under a byte limit.

gRPC refuses any message above its cap (`rpc.limits`), and a 100,000-partition LeaderAndIsr
is close to gRPC's default 4 MiB. Kafka sends one request per broker however large; here a
request whose encoded size (`rpc.sizes`) would pass `max_bytes` becomes several requests of
the same kind, each with the same header and a run of consecutive partition states
(LeaderAndIsr and UpdateMetadata, whose states travel in columns, are halved until each
half fits; StopReplica is cut greedily, entry by entry). A
broker handles each part on its own, as it handles any request that lists some partitions:
LeaderAndIsr and StopReplica answer per partition, and UpdateMetadata merges partition
states into the cache (every part carries the full list of live brokers). A LeaderAndIsr
part carries the live leaders of its own partitions only.

Pure; runs on the controller's event thread (`RequestBatch.send`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from controller.channel_manager import ControlRequest
from rpc import messages as m
from rpc import sizes
from rpc.limits import CONTROL_REQUEST_MAX_BYTES

S = TypeVar("S")


def split_by_size(
    request: ControlRequest, max_bytes: int = CONTROL_REQUEST_MAX_BYTES
) -> list[ControlRequest]:
    """`request` itself when it encodes to at most `max_bytes`, else consecutive parts that
    each do. A single partition state too large for any part goes alone in its part."""
    match request:
        case m.LeaderAndIsrRequest():
            parts = _split_leader_and_isr(request, max_bytes)
        case m.UpdateMetadataRequest():
            parts = _split_update_metadata(request, max_bytes)
        case m.StopReplicaRequest():
            parts = _split_stop_replica(request, max_bytes)
    return [request] if len(parts) == 1 else parts


def _split_update_metadata(r: m.UpdateMetadataRequest, max_bytes: int) -> list[ControlRequest]:
    base = sizes.header_size(r.header) + sizes.live_brokers_size(r.live_brokers)
    runs = _halves(tuple(r.partition_states), base, max_bytes, sizes.update_metadata_states_size)
    return [m.UpdateMetadataRequest(r.header, run, r.live_brokers) for run in runs]


def _split_stop_replica(r: m.StopReplicaRequest, max_bytes: int) -> list[ControlRequest]:
    base = sizes.header_size(r.header)
    runs = _runs(
        r.partition_states,
        base,
        max_bytes,
        sizes.stop_replica_entries_bound,
        sizes.stop_replica_entry_size,
    )
    return [m.StopReplicaRequest(r.header, run) for run in runs]


def _split_leader_and_isr(r: m.LeaderAndIsrRequest, max_bytes: int) -> list[ControlRequest]:
    # every part is charged for all live leaders: an upper bound of its own subset
    base = sizes.header_size(r.header) + sizes.live_leaders_size(r.live_leaders)
    runs = _halves(tuple(r.partition_states), base, max_bytes, sizes.leader_and_isr_states_size)
    parts: list[ControlRequest] = []
    for run in runs:
        leaders = {s.leader for s in run}
        live = tuple(x for x in r.live_leaders if x.broker_id in leaders)
        parts.append(m.LeaderAndIsrRequest(r.header, run, live))
    return parts


def _halves(
    states: tuple[S, ...], base: int, max_bytes: int, size: Callable[[tuple[S, ...]], int]
) -> list[tuple[S, ...]]:
    """`states` whole if `base` plus their `size` stays within `max_bytes`, else each half
    cut the same way (a single state that does not fit goes alone)."""
    if len(states) <= 1 or base + size(states) <= max_bytes:
        return [states]
    middle = len(states) // 2
    return [
        *_halves(states[:middle], base, max_bytes, size),
        *_halves(states[middle:], base, max_bytes, size),
    ]


def _runs(
    entries: Sequence[S],
    base: int,
    max_bytes: int,
    bound: Callable[[Sequence[S]], int],
    exact: Callable[[S], int],
) -> list[tuple[S, ...]]:
    """`entries` cut greedily into runs whose `base` plus exact entry sizes stay within
    `max_bytes`. The exact sizes are computed only when the cheap bound of them all says
    they matter."""
    whole = tuple(entries)
    if base + bound(whole) <= max_bytes:
        return [whole]
    runs: list[tuple[S, ...]] = []
    start = 0
    used = base
    for i, entry in enumerate(whole):
        size = exact(entry)
        if used + size > max_bytes and i > start:
            runs.append(whole[start:i])
            start = i
            used = base
        used += size
    runs.append(whole[start:])
    return runs
