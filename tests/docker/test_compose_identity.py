"""Each compose broker has its own identity, and broker calls are authorized by it.

Setup: the docker tier's compose project (`compose_cluster`), whose brokers each mount
their own certificate (`.secrets/tls/broker-N.crt`, common name `broker-N`).
Steps: with the tools' client certificate, a LeaderAndIsr to broker 1 carrying a
controller epoch far above the cluster's (which, applied, would fence the real
controller); with broker 2's certificate, a ControlledShutdown for broker 3 to the
controller.
Validate: both are answered PERMISSION_DENIED with CLUSTER_AUTHORIZATION_FAILED, and the
called broker's event log has an `unauthorized_request` naming the identity (`client`,
`broker-2`); afterwards the three brokers are still registered and broker 3 was not
shut down.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eventlog import event_log_path, read_events
from harness.compose import ComposeCluster
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import RpcFenced
from rpc.wire import BrokerControlClient, ClientApiClient
from security.tls_files import broker_role, load_identity

pytestmark = pytest.mark.docker

REPO_ROOT = Path(__file__).resolve().parents[2]


def _refusal_logged(cluster: ComposeCluster, service: str, identity: str, method: str) -> None:
    log = event_log_path(cluster.run_dir, service)

    def found() -> list[dict[str, object]]:
        return [
            e
            for e in read_events(log)
            if e["kind"] == "unauthorized_request"
            and e["identity"] == identity
            and e["method"] == method
        ]

    wait_until(found, 15, f"{service} recorded no refusal of {method} by {identity}")


def test_the_tools_certificate_cannot_send_leader_and_isr(
    compose_cluster: ComposeCluster,
) -> None:
    assert compose_cluster.tls is not None
    address = compose_cluster.broker_addresses()["broker1:9092"]
    hijack = m.LeaderAndIsrRequest(m.ControlHeader(1, 1_000_000, -1), ())
    with (
        BrokerControlClient(address, timeout_s=10, tls=compose_cluster.tls) as control,
        pytest.raises(RpcFenced) as refused,
    ):
        control.leader_and_isr(hijack)
    assert refused.value.status == "PERMISSION_DENIED"
    assert "CLUSTER_AUTHORIZATION_FAILED" in str(refused.value)
    _refusal_logged(compose_cluster, "broker1", "client", "BrokerControl/LeaderAndIsr")


def test_broker_2_cannot_ask_the_controlled_shutdown_of_broker_3(
    compose_cluster: ComposeCluster,
) -> None:
    assert compose_cluster.tls is not None
    addresses = compose_cluster.broker_addresses()
    with ClientApiClient(addresses["broker1:9092"], timeout_s=10, tls=compose_cluster.tls) as api:
        controller = api.metadata().controller_id
    assert controller in (1, 2, 3)
    broker2 = load_identity(REPO_ROOT / ".secrets" / "tls", broker_role(2))
    with (
        BrokerControlClient(
            addresses[f"broker{controller}:9092"], timeout_s=10, tls=broker2
        ) as control,
        pytest.raises(RpcFenced) as refused,
    ):
        control.controlled_shutdown(m.ControlledShutdownRequest(3, -1))
    assert refused.value.status == "PERMISSION_DENIED"
    assert "broker 3" in str(refused.value)
    _refusal_logged(
        compose_cluster, f"broker{controller}", "broker-2", "BrokerControl/ControlledShutdown"
    )
    with ClientApiClient(addresses["broker3:9092"], timeout_s=10, tls=compose_cluster.tls) as api:
        assert {b.id for b in api.metadata().brokers} == {1, 2, 3}
