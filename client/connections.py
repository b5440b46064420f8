"""One connection per broker address, for both services, shared by every thread.

`ApiLike` and `ControlLike` are what the client needs from a broker's `ClientApi` and
`BrokerControl`; the default implementations wrap `rpc.wire`'s clients (plaintext, or
mutual TLS when given the caller's identity, `security.tls_files.TlsIdentity`) and turn
`rpc.errors.RpcError` into `client.errors.TransportError`, so nothing above this module
sees a transport error of another kind. Tests plug in-process fakes in through `connect`
(`chaos.testing.FakeBrokers`).

`Connections` makes each connection on first use and keeps it until `close`; its map sits
behind one lock, and calls on a connection run outside it on the calling thread (the
connections themselves are thread-safe).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

from client.errors import TransportError
from rpc import messages as m
from rpc.errors import RpcError
from rpc.wire import BrokerControlClient, ChannelIdentity, ClientApiClient


class ApiLike(Protocol):
    """A broker's `ClientApi`. Calls block the calling thread; transport failures raise
    `TransportError`."""

    def metadata(self, topics: tuple[str, ...] = ()) -> m.MetadataResponse:
        """Brokers, controller and the listed topics (all when empty)."""
        ...

    def produce(self, request: m.ProduceRequest) -> m.ProduceResponse:
        """Append to a partition leader."""
        ...

    def fetch(self, request: m.FetchRequest) -> m.FetchResponse:
        """Read partitions."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


class ControlLike(Protocol):
    """The controller-facing calls of a broker's `BrokerControl` the client makes."""

    def elect_leaders(self, request: m.ElectLeadersRequest) -> m.ElectLeadersResponse:
        """Ask the controller for elections."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


Connect = Callable[[str], ApiLike]
ConnectControl = Callable[[str], ControlLike]


@contextmanager
def _transport() -> Iterator[None]:
    try:
        yield
    except RpcError as exc:
        raise TransportError(exc) from exc


class GrpcApi:
    """`rpc.wire.ClientApiClient` raising `TransportError`."""

    def __init__(self, address: str, timeout_s: float, tls: ChannelIdentity | None = None) -> None:
        self._client = ClientApiClient(address, timeout_s, tls)
        self.target = address

    def metadata(self, topics: tuple[str, ...] = ()) -> m.MetadataResponse:
        """See `ApiLike.metadata`."""
        with _transport():
            return self._client.metadata(topics)

    def produce(self, request: m.ProduceRequest) -> m.ProduceResponse:
        """See `ApiLike.produce`."""
        with _transport():
            return self._client.produce(request)

    def fetch(self, request: m.FetchRequest) -> m.FetchResponse:
        """See `ApiLike.fetch`."""
        with _transport():
            return self._client.fetch(request)

    def close(self) -> None:
        """Close the channel."""
        self._client.close()


class GrpcControl:
    """`rpc.wire.BrokerControlClient`'s ElectLeaders, raising `TransportError`."""

    def __init__(self, address: str, timeout_s: float, tls: ChannelIdentity | None = None) -> None:
        self._client = BrokerControlClient(address, timeout_s, tls)
        self.target = address

    def elect_leaders(self, request: m.ElectLeadersRequest) -> m.ElectLeadersResponse:
        """See `ControlLike.elect_leaders`."""
        with _transport():
            return self._client.elect_leaders(request)

    def close(self) -> None:
        """Close the channel."""
        self._client.close()


def grpc_connect(timeout_s: float = 10.0, tls: ChannelIdentity | None = None) -> Connect:
    """A `Connect` making gRPC `ClientApi` connections with a per-call deadline (mutual TLS
    with `tls`)."""
    return lambda address: GrpcApi(address, timeout_s, tls)


def grpc_connect_control(
    timeout_s: float = 10.0, tls: ChannelIdentity | None = None
) -> ConnectControl:
    """A `ConnectControl` making gRPC `BrokerControl` connections with a per-call deadline
    (mutual TLS with `tls`)."""
    return lambda address: GrpcControl(address, timeout_s, tls)


class Connections:
    """A `ClientApi` and a `BrokerControl` connection per address, made on first use."""

    def __init__(
        self,
        connect: Connect | None = None,
        connect_control: ConnectControl | None = None,
        timeout_s: float = 10.0,
        tls: ChannelIdentity | None = None,
    ) -> None:
        self._connect = connect if connect is not None else grpc_connect(timeout_s, tls)
        self._connect_control = (
            connect_control if connect_control is not None else grpc_connect_control(timeout_s, tls)
        )
        self._lock = threading.Lock()
        self._api: dict[str, ApiLike] = {}
        self._control: dict[str, ControlLike] = {}

    def api(self, address: str) -> ApiLike:
        """The `ClientApi` connection to `address`."""
        with self._lock:
            found = self._api.get(address)
            if found is None:
                found = self._api[address] = self._connect(address)
            return found

    def control(self, address: str) -> ControlLike:
        """The `BrokerControl` connection to `address`."""
        with self._lock:
            found = self._control.get(address)
            if found is None:
                found = self._control[address] = self._connect_control(address)
            return found

    def close(self) -> None:
        """Close every connection."""
        with self._lock:
            api, self._api = list(self._api.values()), {}
            control, self._control = list(self._control.values()), {}
        for connection in api:
            connection.close()
        for control_connection in control:
            control_connection.close()
