"""`RpcServer(control_around=...)`: a served LeaderAndIsr or UpdateMetadata is handled
inside the given context (the broker pauses the garbage collector there); other calls
are not. A real gRPC server on loopback."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from rpc import messages as m
from rpc.testing import RecordingHandlers
from rpc.wire import BrokerControlClient, RpcServer

HEADER = m.ControlHeader(1, 1, 1)


class _Watching(RecordingHandlers):
    """Records, for each control call, whether it ran inside the context."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()
        self.inside: list[tuple[str, bool]] = []

    @contextmanager
    def around(self) -> Iterator[None]:
        self.local.inside = True
        try:
            yield
        finally:
            self.local.inside = False

    def _saw(self, api: str) -> None:
        self.inside.append((api, getattr(self.local, "inside", False)))

    def leader_and_isr(self, request: m.LeaderAndIsrRequest) -> m.LeaderAndIsrResponse:
        self._saw("LeaderAndIsr")
        return super().leader_and_isr(request)

    def update_metadata(self, request: m.UpdateMetadataRequest) -> m.UpdateMetadataResponse:
        self._saw("UpdateMetadata")
        return super().update_metadata(request)

    def stop_replica(self, request: m.StopReplicaRequest) -> m.StopReplicaResponse:
        self._saw("StopReplica")
        return super().stop_replica(request)


def test_leader_and_isr_and_update_metadata_run_inside_the_context() -> None:
    broker = _Watching()
    server = RpcServer(broker, broker, workers=2, control_around=broker.around)
    port = server.start("127.0.0.1", 0)
    try:
        with BrokerControlClient(f"127.0.0.1:{port}", timeout_s=5.0) as client:
            client.leader_and_isr(m.LeaderAndIsrRequest(HEADER, (), ()))
            client.update_metadata(m.UpdateMetadataRequest(HEADER, (), ()))
            client.stop_replica(m.StopReplicaRequest(HEADER, ()))
    finally:
        server.stop(grace_s=0.1)
    assert broker.inside == [
        ("LeaderAndIsr", True),
        ("UpdateMetadata", True),
        ("StopReplica", False),
    ]
