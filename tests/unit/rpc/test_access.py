"""Who may call what on a TLS broker (`rpc.wire.access.refusal`), as a table: the
principal a certificate's common name maps to, and the decisions per method and request."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rpc.wire.access import (
    BROKER_ONLY_METHODS,
    AccessPolicy,
    Principal,
    Refusal,
    principal,
    refusal,
    short_method,
)
from security.tls_files import BROKER, CLIENT, broker_role

POLICY = AccessPolicy(frozenset({BROKER}), lambda refused: None)
PEER = "ipv4:10.0.0.7:40000"


def _shutdown(broker_id: int) -> SimpleNamespace:
    return SimpleNamespace(broker_id=broker_id, broker_epoch=7)


def _fetch(replica_id: int) -> SimpleNamespace:
    return SimpleNamespace(replica_id=replica_id)


def test_full_method_names_are_shortened_to_service_and_method() -> None:
    assert short_method("/testbed.control.v1.BrokerControl/LeaderAndIsr") == (
        "BrokerControl/LeaderAndIsr"
    )


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["broker-2"], Principal("broker-2", True, 2)),
        ([broker_role(17)], Principal("broker-17", True, 17)),
        (["broker"], Principal("broker", True, None)),
        (["client"], Principal("client", False, None)),
        (["zk1"], Principal("zk1", False, None)),
        (["broker-"], Principal("broker-", False, None)),
        (["broker-x"], Principal("broker-x", False, None)),
        (["broker-²"], Principal("broker-²", False, None)),
        (["broker--1"], Principal("broker--1", False, None)),
        ([], Principal("", False, None)),
    ],
)
def test_common_names_map_to_principals(names: list[str], expected: Principal) -> None:
    assert principal(POLICY, names) == expected


@pytest.mark.parametrize(
    ("method", "names", "request_", "status"),
    [
        ("BrokerControl/LeaderAndIsr", ["broker"], None, None),
        ("BrokerControl/LeaderAndIsr", ["broker-1"], None, None),
        ("BrokerControl/UpdateMetadata", ["broker-3"], None, None),
        ("BrokerControl/StopReplica", ["broker-2"], None, None),
        ("BrokerControl/ControlledShutdown", ["broker"], _shutdown(3), None),
        ("BrokerControl/ControlledShutdown", ["broker-3"], _shutdown(3), None),
        ("BrokerControl/ControlledShutdown", ["broker-2"], _shutdown(3), "PERMISSION_DENIED"),
        ("BrokerControl/ControlledShutdown", ["client"], _shutdown(3), "PERMISSION_DENIED"),
        ("BrokerControl/AlterIsr", ["broker-1"], None, None),
        ("BrokerControl/AlterIsr", ["client"], None, "PERMISSION_DENIED"),
        ("BrokerControl/ElectLeaders", ["client"], None, None),
        ("ClientApi/Produce", ["client"], None, None),
        ("ClientApi/Fetch", ["broker"], _fetch(2), None),
        ("ClientApi/Fetch", ["broker-2"], _fetch(2), None),
        ("ClientApi/Fetch", ["client"], _fetch(-1), None),
        ("ClientApi/Fetch", ["client"], _fetch(0), "PERMISSION_DENIED"),
        ("ClientApi/Fetch", ["client"], _fetch(2), "PERMISSION_DENIED"),
        ("ClientApi/OffsetsForLeaderEpoch", ["client"], _fetch(-1), None),
        ("ClientApi/OffsetsForLeaderEpoch", ["client"], _fetch(1), "PERMISSION_DENIED"),
        ("ClientApi/OffsetsForLeaderEpoch", ["broker-1"], _fetch(1), None),
        *[
            (f"BrokerControl/{name}", [CLIENT], _shutdown(1), "PERMISSION_DENIED")
            for name in BROKER_ONLY_METHODS
        ],
        *[
            (f"BrokerControl/{name}", ["zk1"], _shutdown(1), "PERMISSION_DENIED")
            for name in BROKER_ONLY_METHODS
        ],
        ("ClientApi/Metadata", [], None, "UNAUTHENTICATED"),
    ],
)
def test_calls_are_refused_by_principal_and_request(
    method: str, names: list[str], request_: object, status: str | None
) -> None:
    found = refusal(POLICY, method, PEER, names, request_)
    assert (found.status if found else None) == status


def test_a_refusal_names_the_peer_the_identity_and_the_method() -> None:
    assert refusal(POLICY, "BrokerControl/StopReplica", PEER, ["client"]) == Refusal(
        PEER,
        "client",
        "BrokerControl/StopReplica",
        "PERMISSION_DENIED",
        "CLUSTER_AUTHORIZATION_FAILED: 'client' is not a broker identity and may not call "
        "BrokerControl/StopReplica",
    )


def test_a_shutdown_for_another_broker_names_both() -> None:
    found = refusal(POLICY, "BrokerControl/ControlledShutdown", PEER, ["broker-2"], _shutdown(3))
    assert found is not None
    assert found.identity == "broker-2"
    assert found.reason == (
        "CLUSTER_AUTHORIZATION_FAILED: 'broker-2' may not ask a controlled shutdown for broker 3"
    )


def test_a_follower_fetch_by_the_tools_names_the_replica() -> None:
    found = refusal(POLICY, "ClientApi/Fetch", PEER, ["client"], _fetch(2))
    assert found is not None
    assert found.reason == (
        "CLUSTER_AUTHORIZATION_FAILED: 'client' is not a broker identity and may not fetch "
        "as replica 2"
    )
