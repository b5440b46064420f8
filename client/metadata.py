"""`ClusterMetadata`: the last Metadata of one cluster (brokers, controller, partition
leaders), advertised addresses rewritten into reachable ones, and one connection per broker
(`client.connections`). `client.Client` adds the retried calls on top.

Thread-safety: any thread. The metadata and the round-robin state sit behind one lock;
broker calls run outside it on the calling thread.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Self

from client.addresses import endpoint_address, parse_address
from client.connections import (
    ApiLike,
    Connect,
    ConnectControl,
    Connections,
    ControlLike,
    IdentitySource,
)
from client.errors import ClientError, ClusterUnavailable, NoRoute, TransportError
from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import ChannelIdentity


class ClusterMetadata:
    """Metadata and connections of one cluster; see the module docstring.

    `bootstrap` addresses are asked for Metadata first; `address_map` rewrites advertised
    `host:port` strings into ones this process can reach (e.g. `{"broker1:9092":
    "127.0.0.1:9091"}` outside the containers); `topics` are the topics Metadata asks about
    (all when empty). `connect`/`connect_control` replace the gRPC connections (tests);
    `tls`, the caller's identity, makes the gRPC connections mutual TLS; `tls_source`
    instead gives it as it is now, for a client that follows a CA rotation."""

    def __init__(
        self,
        bootstrap: Sequence[str],
        *,
        topics: Sequence[str] = (),
        address_map: Mapping[str, str] | None = None,
        timeout_s: float = 10.0,
        max_attempts: int = 10,
        backoff_s: float = 0.05,
        refresh_interval_s: float = 0.1,
        connect: Connect | None = None,
        connect_control: ConnectControl | None = None,
        tls: ChannelIdentity | None = None,
        tls_source: IdentitySource | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not bootstrap:
            raise ValueError("at least one bootstrap address is needed")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        self._bootstrap = tuple(parse_address(a) for a in bootstrap)
        self._topics = tuple(topics)
        self._address_map = dict(address_map or {})
        self.timeout_s = timeout_s
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.refresh_interval_s = refresh_interval_s
        self._sleep = sleep
        self._clock = clock
        self.connections = Connections(connect, connect_control, timeout_s, tls, tls_source)
        self._lock = threading.Lock()
        self._metadata: m.MetadataResponse | None = None
        self._addresses: dict[int, str] = {}
        self._partitions: dict[TopicPartition, m.PartitionMetadata] = {}
        self._refreshes = 0
        self._refreshed_at = -float("inf")
        self._failed: set[str] = set()  # addresses whose last Metadata call failed

    # -- metadata ------------------------------------------------------------------------

    @property
    def bootstrap(self) -> tuple[str, ...]:
        """The bootstrap addresses, as given."""
        return self._bootstrap

    @property
    def refreshes(self) -> int:
        """How many Metadata refreshes were started."""
        with self._lock:
            return self._refreshes

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
            self._refreshed_at = self._clock()
            rotated = pool[start:] + pool[:start]
            candidates = sorted(rotated, key=lambda a: a in self._failed)
        first: m.MetadataResponse | None = None
        errors: list[str] = []
        for address in candidates:
            try:
                response = self.api(address).metadata(self._topics)
            except TransportError as exc:
                errors.append(str(exc))
                with self._lock:
                    self._failed.add(address)
                continue
            with self._lock:
                self._failed.discard(address)
            if first is None or all(t.error is Errors.NONE for t in response.topics):
                first = response
            if all(t.error is Errors.NONE for t in response.topics):
                break
        if first is None:
            raise ClusterUnavailable("no broker answered Metadata: " + "; ".join(errors))
        self._install(first)
        return first

    def refresh_soon(self) -> None:
        """`refresh` unless one started within `refresh_interval_s` (any thread's); a failure
        is left for the next call to meet."""
        with self._lock:
            if self._clock() - self._refreshed_at < self.refresh_interval_s:
                return
        with contextlib.suppress(ClientError):
            self.refresh()

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

    def broker_addresses(self) -> dict[int, str]:
        """Every live broker's reachable address, per the last Metadata."""
        self._ensure_metadata()
        with self._lock:
            return dict(self._addresses)

    def leader_address(self, tp: TopicPartition) -> str:
        """Where to send a request for `tp`: its leader's address. Raises `NoRoute` (with
        a Kafka error name or a phrase) when there is none, `ClusterUnavailable` when no
        Metadata can be had."""
        state = self.partition(tp)
        if state is None:
            raise NoRoute(Errors.UNKNOWN_TOPIC_OR_PARTITION.name)
        if state.error is not Errors.NONE or state.leader < 0:
            raise NoRoute(Errors.LEADER_NOT_AVAILABLE.name)
        address = self.address_of(state.leader)
        if address is None:
            raise NoRoute(f"leader {state.leader} has no known address")
        return address

    def api(self, address: str) -> ApiLike:
        """The `ClientApi` connection to `address`."""
        return self.connections.api(address)

    def control(self, address: str) -> ControlLike:
        """The `BrokerControl` connection to `address`."""
        return self.connections.control(address)

    def close(self) -> None:
        """Close every connection."""
        self.connections.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
