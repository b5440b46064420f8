"""The produce benchmark's operation: one Produce request per leader in round robin,
carrying a batch for every partition that leader leads, against in-process brokers
(`client.testing.FakeBrokers`). No process is started."""

from __future__ import annotations

from bench.produce.producers import by_leader, produce_op
from chaos.testing import FakeClock
from client import Client
from client.testing import FakeBrokers
from rpc import messages as m

REACHABLE = {1: "127.0.0.1:9091", 2: "127.0.0.1:9092"}
RECORDS = (m.ProducedRecord(None, b"v"),) * 3


def test_partitions_are_grouped_by_their_leader() -> None:
    assert by_leader({0: 2, 1: 1, 2: 2, 3: 1, 4: 3}) == [(1, 3), (0, 2), (4,)]


def test_each_operation_is_one_request_to_one_leader_with_all_its_partitions() -> None:
    brokers = FakeBrokers("t", 4, REACHABLE, REACHABLE, leader=1)
    brokers.move_leader(1, 2)
    brokers.move_leader(3, 2)
    clock = FakeClock()
    client = Client(
        [REACHABLE[1]],
        topics=("t",),
        connect=brokers.connect,
        sleep=clock.sleep,
        clock=clock.monotonic,
    )
    client.refresh()
    op = produce_op(client, "t", by_leader({0: 1, 1: 2, 2: 1, 3: 2}), RECORDS, -1, 1000)
    first, second = op(0, 0), op(0, 1)
    assert (first.ok, first.units, second.ok, second.units) == (True, 6, True, 6)
    produces = [c for c in brokers.calls if c[1] == "produce"]
    assert produces == [(REACHABLE[1], "produce"), (REACHABLE[2], "produce")]
    assert [len(brokers.values(p)) for p in range(4)] == [3, 3, 3, 3]


def test_an_operation_with_a_failed_batch_fails_and_counts_what_was_acknowledged() -> None:
    brokers = FakeBrokers("t", 2, REACHABLE, REACHABLE, leader=1)
    clock = FakeClock()
    client = Client(
        [REACHABLE[1]],
        topics=("t",),
        connect=brokers.connect,
        max_attempts=2,
        sleep=clock.sleep,
        clock=clock.monotonic,
    )
    op = produce_op(client, "t", [(0, 7)], RECORDS, 1, 1000)
    result = op(0, 0)
    assert (result.ok, result.units) == (False, 3)
    assert result.errors == ("UNKNOWN_TOPIC_OR_PARTITION",) * 2
