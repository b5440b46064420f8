"""The workload's view of the cluster: Metadata from any reachable broker, each broker's
client-reachable address, and one cached client per address.

Errors raised to the workload:

    ClientError
    ├── TransportError      one call failed on the wire; whether it took effect is unknown
    ├── ClusterUnavailable  no broker answered Metadata
    └── PollFailed          a poll gave up (raised by `chaos.consumer`)

`Cluster` is shared by every workload thread: its state sits behind one lock, and broker
calls run outside it on the calling thread. `connect` makes a client for an address; the
default wraps `rpc.wire.ClientApiClient` and turns `rpc.errors.RpcError` into `TransportError`,
and tests pass an in-process fake (`chaos.testing`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from rpc import messages as m
from rpc.errors import Errors, RpcError
from rpc.wire import ClientApiClient
from zkdata.model import EndPoint, TopicPartition


class ClientError(Exception):
    """Base of the workload client's errors."""


class TransportError(ClientError):
    """A call to one broker failed on the wire (refused, reset, timed out): its effect is
    unknown."""


class ClusterUnavailable(ClientError):
    """No bootstrap or known broker answered a Metadata request."""


class PollFailed(ClientError):
    """A poll could not read its partition before its deadline."""


class ClientLike(Protocol):
    """What the workload needs from a broker's ClientApi (`rpc.wire.ClientApiClient`'s
    shape). Calls block the calling thread; transport failures raise `TransportError`."""

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


Connect = Callable[[str], ClientLike]

_ADDRESS = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?P<port>[0-9]{1,5})")


def parse_address(text: str) -> str:
    """Validate a `host:port` string (IPv6 hosts in brackets) and return it stripped."""
    address = text.strip()
    match = _ADDRESS.fullmatch(address)
    if match is None or not 0 < int(match["port"]) < 65536:
        raise ValueError(f"expected host:port with a port in 1..65535, got {text!r}")
    return address


def parse_address_map(text: str) -> dict[str, str]:
    """Parse `advertised=reachable,...` (each side `host:port`) into a dict."""
    out: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        advertised, sep, reachable = item.partition("=")
        if not sep:
            raise ValueError(f"expected ADVERTISED=REACHABLE, got {item!r}")
        out[parse_address(advertised)] = parse_address(reachable)
    return out


def endpoint_address(endpoint: EndPoint) -> str:
    """`host:port` of an endpoint, IPv6 hosts in brackets."""
    host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
    return f"{host}:{endpoint.port}"


class _GrpcClient:
    """`ClientApiClient` with gRPC failures turned into `TransportError`."""

    def __init__(self, address: str, timeout_s: float) -> None:
        self._client = ClientApiClient(address, timeout_s)
        self.target = address

    def metadata(self, topics: tuple[str, ...] = ()) -> m.MetadataResponse:
        try:
            return self._client.metadata(topics)
        except RpcError as exc:
            raise _transport_error(self.target, exc) from exc

    def produce(self, request: m.ProduceRequest) -> m.ProduceResponse:
        try:
            return self._client.produce(request)
        except RpcError as exc:
            raise _transport_error(self.target, exc) from exc

    def fetch(self, request: m.FetchRequest) -> m.FetchResponse:
        try:
            return self._client.fetch(request)
        except RpcError as exc:
            raise _transport_error(self.target, exc) from exc

    def close(self) -> None:
        self._client.close()


def _transport_error(target: str, exc: RpcError) -> TransportError:
    return TransportError(f"{exc.status} from {target}")


def grpc_connect(timeout_s: float = 10.0) -> Connect:
    """A `connect` making real gRPC clients with a per-call timeout of `timeout_s`."""
    return lambda address: _GrpcClient(address, timeout_s)


class Cluster:
    """Bootstrap addresses, the last Metadata seen, and a client per address. Any thread.

    `address_map` rewrites advertised `host:port` strings into ones this process can reach
    (e.g. `{"broker1:9092": "127.0.0.1:9091"}` outside the containers); `topics` are the
    topics Metadata asks about (all when empty)."""

    def __init__(
        self,
        bootstrap: Sequence[str],
        *,
        topics: Sequence[str] = (),
        address_map: Mapping[str, str] | None = None,
        connect: Connect | None = None,
    ) -> None:
        if not bootstrap:
            raise ValueError("at least one bootstrap address is needed")
        self._bootstrap = tuple(parse_address(a) for a in bootstrap)
        self._topics = tuple(topics)
        self._address_map = dict(address_map or {})
        self._connect = connect if connect is not None else grpc_connect()
        self._lock = threading.Lock()
        self._clients: dict[str, ClientLike] = {}
        self._metadata: m.MetadataResponse | None = None
        self._addresses: dict[int, str] = {}
        self._partitions: dict[TopicPartition, m.PartitionMetadata] = {}
        self._refreshes = 0
        self._failed: set[str] = set()  # addresses whose last Metadata call failed

    def refresh(self) -> m.MetadataResponse:
        """Ask brokers in turn and keep the first answer that knows every wanted topic, else
        the first answer. Each refresh starts one broker further along the known brokers and
        the bootstrap list (so a broker with stale metadata is not asked every time), and
        tries last the ones whose last call failed (a paused broker costs a timeout).
        Raises `ClusterUnavailable` when nobody answers."""
        with self._lock:
            pool = list(dict.fromkeys([*self._addresses.values(), *self._bootstrap]))
            start = self._refreshes % len(pool)
            self._refreshes += 1
            rotated = pool[start:] + pool[:start]
            candidates = sorted(rotated, key=lambda a: a in self._failed)
        first: tuple[str, m.MetadataResponse] | None = None
        errors: list[str] = []
        for address in candidates:
            try:
                response = self.client(address).metadata(self._topics)
            except TransportError as exc:
                errors.append(str(exc))
                with self._lock:
                    self._failed.add(address)
                continue
            with self._lock:
                self._failed.discard(address)
            if first is None:
                first = (address, response)
            if all(t.error is Errors.NONE for t in response.topics):
                first = (address, response)
                break
        if first is None:
            raise ClusterUnavailable("no broker answered Metadata: " + "; ".join(errors))
        self._install(first[1])
        return first[1]

    def _install(self, response: m.MetadataResponse) -> None:
        addresses = {
            b.id: self.map_address(endpoint_address(b.endpoints[0]))
            for b in response.brokers
            if b.endpoints
        }
        partitions = {
            TopicPartition(t.name, p.partition): p for t in response.topics for p in t.partitions
        }
        with self._lock:
            self._metadata = response
            self._addresses = addresses
            self._partitions = partitions

    def map_address(self, advertised: str) -> str:
        """The reachable address for an advertised `host:port` (itself when not mapped)."""
        return self._address_map.get(advertised, advertised)

    def _ensure_metadata(self) -> None:
        with self._lock:
            missing = self._metadata is None
        if missing:
            self.refresh()

    @property
    def metadata(self) -> m.MetadataResponse | None:
        """The last Metadata kept, if any."""
        with self._lock:
            return self._metadata

    def partition(self, tp: TopicPartition) -> m.PartitionMetadata | None:
        """What the last Metadata said about `tp` (refreshing first if there is none)."""
        self._ensure_metadata()
        with self._lock:
            return self._partitions.get(tp)

    def partitions_of(self, topic: str) -> tuple[int, ...]:
        """The partition numbers of `topic` in the last Metadata."""
        self._ensure_metadata()
        with self._lock:
            return tuple(sorted(tp.partition for tp in self._partitions if tp.topic == topic))

    def leader_of(self, tp: TopicPartition) -> int | None:
        """The leader of `tp` per the last Metadata; None when unknown or leaderless."""
        state = self.partition(tp)
        if state is None or state.error is not Errors.NONE or state.leader < 0:
            return None
        return state.leader

    def address_of(self, broker_id: int) -> str | None:
        """The reachable address of a live broker, if it is in the last Metadata."""
        with self._lock:
            return self._addresses.get(broker_id)

    def client(self, address: str) -> ClientLike:
        """The cached client for `address` (made on first use)."""
        with self._lock:
            client = self._clients.get(address)
            if client is None:
                client = self._clients[address] = self._connect(address)
            return client

    def close(self) -> None:
        """Close every cached client."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()
