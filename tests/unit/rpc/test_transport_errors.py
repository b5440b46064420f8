"""Transport failures leave `rpc.wire`'s clients as `rpc.errors.RpcError` subclasses.

A real gRPC server on loopback (`RpcServer`) plays the broker: a handler that blocks past
the deadline, one that crashes, a port nobody serves, a channel closed by its owner. The
status table of `rpc.wire.status` is checked on its own for the codes a loopback server
cannot produce through a domain handler.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from rpc import messages as m
from rpc.errors import (
    Errors,
    RpcClosed,
    RpcDeadlineExceeded,
    RpcError,
    RpcFailed,
    RpcFenced,
    RpcMalformed,
    RpcUnavailable,
)
from rpc.testing import RecordingHandlers
from rpc.wire import BrokerControlClient, ClientApiClient, RpcServer
from rpc.wire.status import from_grpc, mapped


class _Broker(RecordingHandlers):
    """Answers Metadata after `release` when `block` is set; crashes on Produce."""

    def __init__(self) -> None:
        super().__init__()
        self.block = False
        self.released = threading.Event()

    def metadata(self, request: m.MetadataRequest) -> m.MetadataResponse:
        if self.block:
            self.released.wait(10.0)
        return m.MetadataResponse(-1, 0, (), ())

    def produce(self, request: m.ProduceRequest) -> m.ProduceResponse:
        raise RuntimeError("handler crashed")


@pytest.fixture
def served() -> Iterator[tuple[_Broker, str]]:
    broker = _Broker()
    server = RpcServer(broker, broker, workers=4)
    port = server.start("127.0.0.1", 0)
    try:
        yield broker, f"127.0.0.1:{port}"
    finally:
        broker.released.set()
        server.stop(grace_s=0.1)


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_served_call_returns_the_domain_response(served: tuple[_Broker, str]) -> None:
    _, address = served
    with BrokerControlClient(address, timeout_s=5.0) as client:
        request = m.UpdateMetadataRequest(m.ControlHeader(1, 1, 1), (), ())
        assert client.update_metadata(request) == m.UpdateMetadataResponse(Errors.NONE)


def test_a_port_nobody_serves_is_unavailable() -> None:
    target = f"127.0.0.1:{_unused_port()}"
    with ClientApiClient(target, timeout_s=2.0) as client, pytest.raises(RpcUnavailable) as err:
        client.metadata(())
    assert err.value.target == target
    assert err.value.status == "UNAVAILABLE"


def test_an_answer_later_than_the_deadline_is_deadline_exceeded(
    served: tuple[_Broker, str],
) -> None:
    broker, address = served
    broker.block = True
    with ClientApiClient(address, timeout_s=0.2) as client, pytest.raises(RpcDeadlineExceeded):
        client.metadata(())


def test_a_crashing_handler_is_a_failure_of_the_peer(served: tuple[_Broker, str]) -> None:
    _, address = served
    request = m.ProduceRequest.single("t", 0, ())
    with ClientApiClient(address, timeout_s=5.0) as client, pytest.raises(RpcFailed) as err:
        client.produce(request)
    assert err.value.status == "UNKNOWN"


def test_acks_0_returns_without_waiting_for_the_answer(served: tuple[_Broker, str]) -> None:
    """The handler crashes, but an acks=0 producer never learns it: nothing is awaited."""
    _, address = served
    request = m.ProduceRequest.single("t", 0, (), acks=0)
    with ClientApiClient(address, timeout_s=5.0) as client:
        assert client.produce(request) == m.ProduceResponse(
            (m.PartitionProduceResult("t", 0, Errors.NONE, -1, -1),)
        )


def test_a_closed_channel_refuses_calls_without_sending(served: tuple[_Broker, str]) -> None:
    _, address = served
    client = ClientApiClient(address, timeout_s=5.0)
    client.close()
    with pytest.raises(RpcClosed):
        client.metadata(())


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (grpc.StatusCode.UNAVAILABLE, RpcUnavailable),
        (grpc.StatusCode.CANCELLED, RpcUnavailable),
        (grpc.StatusCode.DEADLINE_EXCEEDED, RpcDeadlineExceeded),
        (grpc.StatusCode.UNAUTHENTICATED, RpcFenced),
        (grpc.StatusCode.PERMISSION_DENIED, RpcFenced),
        (grpc.StatusCode.INVALID_ARGUMENT, RpcMalformed),
        (grpc.StatusCode.INTERNAL, RpcFailed),
        (grpc.StatusCode.UNIMPLEMENTED, RpcFailed),
    ],
)
def test_each_status_maps_to_one_error(code: grpc.StatusCode, error: type[RpcError]) -> None:
    mapped_error = from_grpc("b:1", _StatusError(code))
    assert type(mapped_error) is error
    assert mapped_error.status == code.name
    assert str(mapped_error) == f"{code.name} from b:1: detail"


def test_decode_failures_are_malformed() -> None:
    from google.protobuf.message import DecodeError

    with pytest.raises(RpcMalformed), mapped("b:1"):
        raise DecodeError("truncated")


class _StatusError(grpc.RpcError, grpc.Call):
    """A failed call as gRPC reports it: a status code and details."""

    def __init__(self, code: grpc.StatusCode) -> None:
        self._code = code

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return "detail"

    def initial_metadata(self) -> tuple[tuple[str, str | bytes], ...]:
        return ()

    def trailing_metadata(self) -> Any:
        return ()

    def is_active(self) -> bool:
        return False

    def time_remaining(self) -> float:
        return 0.0

    def cancel(self) -> bool:
        return False

    def add_callback(self, callback: object) -> bool:
        return False
