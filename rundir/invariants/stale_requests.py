"""`stale_requests_fenced`: every stale control request the `request` fault's proxy
delivered late (a duplicate's second copy, a reordered request after a newer one) was
fenced by the broker. Pure; any thread.

The witness is the proxy's record (the run's `traces/<fault id>.jsonl`, see
docs/chaos-network.md): for each late LeaderAndIsr or StopReplica copy it names the
partitions whose leader epoch was not newer than one the proxy had already delivered to
that broker in a LeaderAndIsr (`stale`), and of those the ones the broker answered without an error
(`unfenced`). A stale partition obeyed is a violation, named by the request's kind,
controller epoch and the partition with its leader epoch. A run without such a record is
not judged (the fault delivered no late copy, or the run had none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rundir.invariants.names import STALE_REQUESTS_FENCED
from rundir.results import InvariantResult, Violation

__all__ = ["stale_requests_fenced"]


def stale_requests_fenced(records: Sequence[Mapping[str, Any]] | None) -> InvariantResult:
    """See the module docstring; `records` are the proxy records of the run (None: the run
    kept none)."""
    late = [r for r in records or () if isinstance(r.get("stale"), list)]
    if not late:
        return InvariantResult(
            STALE_REQUESTS_FENCED, note="no stale request was delivered late", judged=False
        )
    violations = []
    stale = 0
    for record in late:
        stale += len(record["stale"])
        for topic, partition, epoch in record.get("unfenced") or ():
            violations.append(
                Violation(
                    f"{topic}-{partition}",
                    f"{record.get('kind')} of controller epoch {record.get('controller_epoch')}"
                    f" with leader epoch {epoch}, delivered late ({record.get('step')} at "
                    f"{record.get('ts_ms')} ms, {record.get('trace', 'trace')}), was obeyed: "
                    "the broker had already been sent that epoch or a newer one in a LeaderAndIsr",
                )
            )
    fenced = stale - len(violations)
    return InvariantResult(
        STALE_REQUESTS_FENCED,
        tuple(violations),
        checked=stale,
        note=f"{len(late)} late copies, {fenced} of {stale} stale partitions fenced",
    )
