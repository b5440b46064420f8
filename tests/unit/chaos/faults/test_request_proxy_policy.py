"""The request proxy's policy against a fake broker: a duplicated LeaderAndIsr delivered
again late is stale for a partition the broker still holds, and not for one a StopReplica
deleted meanwhile (the broker forgot it, as Kafka 2.x's does); an answer that does not
decode is handed to the controller as it came."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from chaos.faults.request_plan import RequestPlan
from chaos.faults.request_proxy import ProxyPolicy, Recorder
from rpc.wire.relay import ControlSummary, empty_answer

SIDE = ("t-side", 2)
LEADER_AND_ISR = ControlSummary("LeaderAndIsr", 1, 15, 7, (("t-side", 2, 1), ("t", 0, 4)))
DELETE = ControlSummary("StopReplica", 1, 15, 7, (("t-side", 2, 1),), (SIDE,))


def _answering(kind: str) -> Any:
    async def forward(body: bytes) -> bytes:
        return empty_answer(kind)

    return forward


def _records(path: Path, count: int) -> list[dict[str, Any]]:
    """The first `count` records, once the proxy wrote them (a deadline, not a sleep)."""
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count:
            return [json.loads(line) for line in lines]
    raise AssertionError(f"{path}: fewer than {count} records in 5 s")


async def _duplicate_then(path: Path, between: list[ControlSummary]) -> None:
    plan = RequestPlan("duplicate", kinds=("LeaderAndIsr",), count=1, delay_ms=50)
    policy = ProxyPolicy(plan, Recorder(path))
    await policy.control(LEADER_AND_ISR, b"", _answering("LeaderAndIsr"))
    for summary in between:
        await policy.control(summary, b"", _answering(summary.kind))
    deadline = time.monotonic() + 5.0  # the late copy is on the loop's timer
    while len(path.read_text().splitlines()) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.01)


def test_a_late_copy_is_stale_for_what_the_broker_still_holds(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    asyncio.run(_duplicate_then(path, []))
    again = _records(path, 2)[1]
    assert again["step"] == "delivered-again"
    assert again["stale"] == [["t-side", 2, 1], ["t", 0, 4]]
    assert again["unfenced"] == [["t-side", 2, 1], ["t", 0, 4]]


def test_a_late_copy_is_not_stale_for_a_partition_deleted_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    asyncio.run(_duplicate_then(path, [DELETE]))
    again = _records(path, 2)[1]
    assert again["step"] == "delivered-again"
    assert again["stale"] == [["t", 0, 4]]
    assert again["unfenced"] == [["t", 0, 4]]


async def _duplicate_crossing_a_deletion(path: Path) -> None:
    plan = RequestPlan("duplicate", kinds=("LeaderAndIsr",), count=1, delay_ms=50)
    policy = ProxyPolicy(plan, Recorder(path))
    released = asyncio.Event()

    async def deleting(body: bytes) -> bytes:  # the broker answers the deletion late
        await released.wait()
        return empty_answer("StopReplica")

    await policy.control(LEADER_AND_ISR, b"", _answering("LeaderAndIsr"))
    deletion = asyncio.get_running_loop().create_task(policy.control(DELETE, b"", deleting))
    deadline = time.monotonic() + 5.0
    while len(path.read_text().splitlines()) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    released.set()
    await deletion


def test_a_late_copy_crossing_a_deletion_in_flight_is_not_judged_for_it(tmp_path: Path) -> None:
    # a blind hunt's run: the broker applied the StopReplica 5 ms before the late copy,
    # and the proxy learned of it only from the answer, which came after
    path = tmp_path / "trace.jsonl"
    asyncio.run(_duplicate_crossing_a_deletion(path))
    again = _records(path, 2)[1]
    assert again["stale"] == [["t", 0, 4]]
    assert again["unfenced"] == [["t", 0, 4]]
    assert again["raced_deletion"] == [["t-side", 2, 1]]


def test_an_answer_that_does_not_decode_goes_back_as_it_came(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    plan = RequestPlan("delay", kinds=("LeaderAndIsr",), count=1, delay_ms=0)
    policy = ProxyPolicy(plan, Recorder(path))

    async def garbled(body: bytes) -> bytes:
        return b"\xff\xff\xff"

    answer = asyncio.run(policy.control(LEADER_AND_ISR, b"", garbled))
    assert answer == b"\xff\xff\xff"
    assert _records(path, 1)[0]["answer"] == "undecodable"
