"""One connection per broker address, for both services, shared by every thread.

`ApiLike` and `ControlLike` are what the client needs from a broker's `ClientApi` and
`BrokerControl`; the default implementations wrap `rpc.wire`'s clients (plaintext, or
mutual TLS when given the caller's identity, `security.tls_files.TlsIdentity`) and turn
`rpc.errors.RpcError` into `client.errors.TransportError`, so nothing above this module
sees a transport error of another kind. Tests plug in-process fakes in through `connect`
(`chaos.testing.FakeBrokers`).

`Connections` makes each connection on first use and keeps it until `close`; its map sits
behind one lock, and calls on a connection run outside it on the calling thread (the
connections themselves are thread-safe). Given a `tls_source` instead of a fixed identity
(`security.tls_files.FollowedIdentity.current`), it asks it before handing out a
connection, and when the identity changed (a CA rotation replaced the files) makes new
connections with the new one; the old ones are closed with the rest on `close`, so a call
still running on one ends as it would have.
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
        """Append to partitions the broker leads (one result per partition)."""
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
#: The caller's identity as it is now (read again from its files when they change).
IdentitySource = Callable[[], ChannelIdentity]


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
        tls_source: IdentitySource | None = None,
    ) -> None:
        self._timeout_s = timeout_s
        self._source = tls_source if connect is None and connect_control is None else None
        self._identity = self._source() if self._source is not None else tls
        self._connect = connect if connect is not None else grpc_connect(timeout_s, self._identity)
        self._connect_control = (
            connect_control
            if connect_control is not None
            else grpc_connect_control(timeout_s, self._identity)
        )
        self._lock = threading.Lock()
        self._api: dict[str, ApiLike] = {}
        self._control: dict[str, ControlLike] = {}
        self._retired: list[ApiLike | ControlLike] = []

    def _follow(self) -> None:
        """With a source whose identity changed: new connections from now on (under the
        lock)."""
        if self._source is None:
            return
        identity = self._source()
        if identity == self._identity:
            return
        self._identity = identity
        self._connect = grpc_connect(self._timeout_s, identity)
        self._connect_control = grpc_connect_control(self._timeout_s, identity)
        self._retired += [*self._api.values(), *self._control.values()]
        self._api, self._control = {}, {}

    def api(self, address: str) -> ApiLike:
        """The `ClientApi` connection to `address`."""
        with self._lock:
            self._follow()
            found = self._api.get(address)
            if found is None:
                found = self._api[address] = self._connect(address)
            return found

    def control(self, address: str) -> ControlLike:
        """The `BrokerControl` connection to `address`."""
        with self._lock:
            self._follow()
            found = self._control.get(address)
            if found is None:
                found = self._control[address] = self._connect_control(address)
            return found

    def close(self) -> None:
        """Close every connection."""
        with self._lock:
            api, self._api = list(self._api.values()), {}
            control, self._control = list(self._control.values()), {}
            retired, self._retired = self._retired, []
        for old in retired:
            old.close()
        for connection in api:
            connection.close()
        for control_connection in control:
            control_connection.close()
