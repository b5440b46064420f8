"""One client of the cluster's `ClientApi` and `BrokerControl` services: bootstrap from a
broker list or from ZooKeeper, Metadata with leader lookup and refresh, one connection per
broker, Produce (acks 0, 1 or all; batches), Fetch and ElectLeaders with retries and
deadlines. Used by the workload, the benchmarks, the CLI and the harness. Failures are
`client.errors.ClientError`s. Each call blocks its calling thread."""

from client.addresses import endpoint_address, parse_address, parse_address_map, parse_addresses
from client.bootstrap import controller_address_from_zookeeper, registered_addresses
from client.client import FETCH_RETRIABLE, PRODUCE_RETRIABLE, Client, Produced
from client.connections import ApiLike, Connect, ControlLike, grpc_connect
from client.errors import (
    ClientError,
    ClusterUnavailable,
    ControllerUnknown,
    FetchFailed,
    NoRoute,
    ProduceFailed,
    RequestFailed,
    TransportError,
)
from client.metadata import ClusterMetadata

__all__ = [
    "FETCH_RETRIABLE",
    "PRODUCE_RETRIABLE",
    "ApiLike",
    "Client",
    "ClientError",
    "ClusterMetadata",
    "ClusterUnavailable",
    "Connect",
    "ControlLike",
    "ControllerUnknown",
    "FetchFailed",
    "NoRoute",
    "ProduceFailed",
    "Produced",
    "RequestFailed",
    "TransportError",
    "controller_address_from_zookeeper",
    "endpoint_address",
    "grpc_connect",
    "parse_address",
    "parse_address_map",
    "parse_addresses",
    "registered_addresses",
]
