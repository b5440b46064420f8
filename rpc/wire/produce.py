"""Produce on the wire: the request and the response between `rpc.messages` and protobuf.

The protobuf shape is Kafka's: topics, each with its partitions (records per partition in
the request, one result per partition in the response). The domain shape is a flat tuple
of partition entries in the request's order; converting to protobuf groups consecutive
entries of one topic, and converting back flattens them, so the order (and any topic or
partition named twice) survives the round trip. Pure; any thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import groupby
from typing import TypeVar

from rpc import messages as m
from rpc.errors import Errors
from testbed_rpc import control_pb2 as pb

_Entry = TypeVar("_Entry", m.PartitionRecords, m.PartitionProduceResult)


def _by_topic(entries: Iterable[_Entry]) -> Iterator[tuple[str, Iterator[_Entry]]]:
    """Runs of consecutive entries naming the same topic."""
    return groupby(entries, key=lambda e: e.topic)


def produce_request_to_pb(r: m.ProduceRequest) -> pb.ProduceRequest:
    """Domain -> protobuf. Records are added in place (`add`), not built and then copied
    into the repeated field: a third of the time for a batch of 100."""
    request = pb.ProduceRequest(acks=r.acks, timeout_ms=r.timeout_ms)
    for topic, entries in _by_topic(r.partitions):
        partitions = request.topics.add(topic=topic).partitions
        for entry in entries:
            add = partitions.add(partition=entry.partition).records.add
            for rec in entry.records:
                if rec.key is None:
                    add(value=rec.value, timestamp_ms=rec.timestamp_ms)
                else:
                    add(key=rec.key, has_key=True, value=rec.value, timestamp_ms=rec.timestamp_ms)
    return request


def produce_request_from_pb(r: pb.ProduceRequest) -> m.ProduceRequest:
    """Protobuf -> domain."""
    record = m.ProducedRecord
    return m.ProduceRequest(
        partitions=tuple(
            m.PartitionRecords(
                t.topic,
                p.partition,
                tuple(
                    record(rec.key if rec.has_key else None, rec.value, rec.timestamp_ms)
                    for rec in p.records
                ),
            )
            for t in r.topics
            for p in t.partitions
        ),
        acks=r.acks,
        timeout_ms=r.timeout_ms,
    )


def produce_response_to_pb(r: m.ProduceResponse) -> pb.ProduceResponse:
    """Domain -> protobuf."""
    response = pb.ProduceResponse()
    for topic, results in _by_topic(r.partitions):
        add = response.topics.add(topic=topic).partitions.add
        for p in results:
            add(
                partition=p.partition,
                error_code=int(p.error),
                base_offset=p.base_offset,
                last_offset=p.last_offset,
                error_message=p.error_message,
            )
    return response


def produce_response_from_pb(r: pb.ProduceResponse) -> m.ProduceResponse:
    """Protobuf -> domain."""
    return m.ProduceResponse(
        tuple(
            m.PartitionProduceResult(
                t.topic,
                p.partition,
                Errors.from_code(p.error_code),
                p.base_offset,
                p.last_offset,
                p.error_message,
            )
            for t in r.topics
            for p in t.partitions
        )
    )


def unanswered(r: m.ProduceRequest) -> m.ProduceResponse:
    """What an acks=0 request gets without waiting for the broker: every partition NONE,
    without offsets (Kafka's broker sends no answer)."""
    return m.ProduceResponse(
        tuple(m.PartitionProduceResult(p.topic, p.partition, Errors.NONE) for p in r.partitions)
    )
