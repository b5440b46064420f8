"""AlterIsr (KIP-497) on the wire: its request and response converted between
`rpc.messages` and protobuf, partitions listed flat, each with its topic name. Values only;
any thread."""

from __future__ import annotations

from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors
from testbed_rpc import control_pb2 as pb


def alter_isr_request_to_pb(r: m.AlterIsrRequest) -> pb.AlterIsrRequest:
    """Domain -> protobuf."""
    return pb.AlterIsrRequest(
        broker_id=r.broker_id,
        broker_epoch=r.broker_epoch,
        partitions=[
            pb.AlterIsrPartition(
                topic=p.topic_partition.topic,
                partition=p.topic_partition.partition,
                leader_epoch=p.leader_epoch,
                new_isr=list(p.new_isr),
                current_isr_version=p.current_isr_version,
            )
            for p in r.partitions
        ],
    )


def alter_isr_request_from_pb(r: pb.AlterIsrRequest) -> m.AlterIsrRequest:
    """Protobuf -> domain."""
    return m.AlterIsrRequest(
        r.broker_id,
        r.broker_epoch,
        tuple(
            m.AlterIsrPartition(
                TopicPartition(p.topic, p.partition),
                p.leader_epoch,
                tuple(p.new_isr),
                p.current_isr_version,
            )
            for p in r.partitions
        ),
    )


def alter_isr_response_to_pb(r: m.AlterIsrResponse) -> pb.AlterIsrResponse:
    """Domain -> protobuf."""
    return pb.AlterIsrResponse(
        error_code=int(r.error),
        partitions=[
            pb.AlterIsrPartitionResult(
                topic=p.topic_partition.topic,
                partition=p.topic_partition.partition,
                error_code=int(p.error),
                leader_id=p.leader,
                leader_epoch=p.leader_epoch,
                isr=list(p.isr),
                current_isr_version=p.current_isr_version,
            )
            for p in r.partitions
        ],
    )


def alter_isr_response_from_pb(r: pb.AlterIsrResponse) -> m.AlterIsrResponse:
    """Protobuf -> domain."""
    return m.AlterIsrResponse(
        Errors.from_code(r.error_code),
        tuple(
            m.AlterIsrPartitionResult(
                TopicPartition(p.topic, p.partition),
                Errors.from_code(p.error_code),
                p.leader_id,
                p.leader_epoch,
                tuple(p.isr),
                p.current_isr_version,
            )
            for p in r.partitions
        ),
    )
