"""Test doubles for the services `rpc.wire.RpcServer` serves.

`RecordingHandlers` is both a `BrokerControlHandler` and a `ClientApiHandler`: it records
the name of every handler that ran and answers each call with an empty success (Metadata
names broker 1 as the controller, at epoch 1). Subclass it to make one method block or
fail. Produce and Fetch run on the server's event loop (they must not block), the others
on gRPC's worker threads; `ran` is appended under the GIL.
"""

from __future__ import annotations

from rpc import messages as m
from rpc.errors import Errors


class RecordingHandlers:
    """Every BrokerControl and ClientApi handler, recording which ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def metadata(self, request: m.MetadataRequest) -> m.MetadataResponse:
        """An empty cluster whose controller is broker 1."""
        self.ran.append("metadata")
        return m.MetadataResponse(1, 1, (), ())

    def produce(self, request: m.ProduceRequest) -> m.ProduceResponse:
        """Every partition acknowledged at offset 0."""
        self.ran.append("produce")
        return m.ProduceResponse(
            tuple(
                m.PartitionProduceResult(p.topic, p.partition, Errors.NONE, 0, 0)
                for p in request.partitions
            )
        )

    async def fetch_async(self, request: m.FetchRequest) -> m.FetchResponse:
        """No partitions."""
        self.ran.append("fetch")
        return m.FetchResponse(Errors.NONE)

    def offsets_for_leader_epoch(
        self, request: m.OffsetsForLeaderEpochRequest
    ) -> m.OffsetsForLeaderEpochResponse:
        """No partitions."""
        self.ran.append("offsets_for_leader_epoch")
        return m.OffsetsForLeaderEpochResponse(())

    def replica_audit(self, request: m.ReplicaAuditRequest) -> m.ReplicaAuditResponse:
        """Broker 1, no replicas."""
        self.ran.append("replica_audit")
        return m.ReplicaAuditResponse(1)

    def leader_and_isr(self, request: m.LeaderAndIsrRequest) -> m.LeaderAndIsrResponse:
        """Accepted, no partition errors."""
        self.ran.append("leader_and_isr")
        return m.LeaderAndIsrResponse(Errors.NONE, ())

    def update_metadata(self, request: m.UpdateMetadataRequest) -> m.UpdateMetadataResponse:
        """Accepted."""
        self.ran.append("update_metadata")
        return m.UpdateMetadataResponse(Errors.NONE)

    def stop_replica(self, request: m.StopReplicaRequest) -> m.StopReplicaResponse:
        """Accepted, no partition errors."""
        self.ran.append("stop_replica")
        return m.StopReplicaResponse(Errors.NONE, ())

    def controlled_shutdown(
        self, request: m.ControlledShutdownRequest
    ) -> m.ControlledShutdownResponse:
        """Nothing left to move."""
        self.ran.append("controlled_shutdown")
        return m.ControlledShutdownResponse(Errors.NONE, ())

    def elect_leaders(self, request: m.ElectLeadersRequest) -> m.ElectLeadersResponse:
        """No partition elected."""
        self.ran.append("elect_leaders")
        return m.ElectLeadersResponse(Errors.NONE, ())

    def alter_isr(self, request: m.AlterIsrRequest) -> m.AlterIsrResponse:
        """No partition changed."""
        self.ran.append("alter_isr")
        return m.AlterIsrResponse(Errors.NONE, ())
