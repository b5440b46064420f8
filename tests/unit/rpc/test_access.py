"""Who may call what on a TLS broker (`rpc.wire.access.refusal`), as a table."""

from __future__ import annotations

import pytest

from rpc.wire.access import BROKER_ONLY_METHODS, AccessPolicy, Refusal, refusal, short_method

POLICY = AccessPolicy(frozenset({"broker"}), lambda refused: None)
PEER = "ipv4:10.0.0.7:40000"


def test_full_method_names_are_shortened_to_service_and_method() -> None:
    assert short_method("/testbed.control.v1.BrokerControl/LeaderAndIsr") == (
        "BrokerControl/LeaderAndIsr"
    )


@pytest.mark.parametrize(
    ("method", "names", "status"),
    [
        ("BrokerControl/LeaderAndIsr", ["broker"], None),
        ("BrokerControl/ControlledShutdown", ["broker"], None),
        ("BrokerControl/AlterIsr", ["broker"], None),
        ("BrokerControl/AlterIsr", ["client"], "PERMISSION_DENIED"),
        ("BrokerControl/ElectLeaders", ["client"], None),
        ("ClientApi/Produce", ["client"], None),
        ("ClientApi/Fetch", ["broker"], None),
        *[
            (f"BrokerControl/{name}", ["client"], "PERMISSION_DENIED")
            for name in BROKER_ONLY_METHODS
        ],
        ("ClientApi/Metadata", [], "UNAUTHENTICATED"),
    ],
)
def test_calls_are_refused_by_role(method: str, names: list[str], status: str | None) -> None:
    found = refusal(POLICY, method, PEER, names)
    assert (found.status if found else None) == status


def test_a_refusal_names_the_peer_the_identity_and_the_method() -> None:
    assert refusal(POLICY, "BrokerControl/StopReplica", PEER, ["client"]) == Refusal(
        PEER,
        "client",
        "BrokerControl/StopReplica",
        "PERMISSION_DENIED",
        "'client' may not call BrokerControl/StopReplica; only broker",
    )
