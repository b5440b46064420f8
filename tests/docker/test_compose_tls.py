"""The compose cluster speaks only mutual TLS.

Setup: the docker tier's compose project (`compose_cluster`), whose brokers mount the
repository's `.secrets/tls`.
Steps: a plaintext Metadata call to broker 1's published port; the same call with the
project's client certificate.
Validate: the plaintext call fails as unavailable and broker 1's event log records the
refused handshake; the TLS call lists the three brokers, which registered `SSL` endpoints.
"""

from __future__ import annotations

import pytest

from eventlog import event_log_path, read_events
from harness.compose import ComposeCluster
from harness.waiting import wait_until
from rpc.errors import RpcUnavailable
from rpc.wire import ClientApiClient
from zkdata.client import KafkaZkClient

pytestmark = pytest.mark.docker


def test_the_cluster_refuses_plaintext_and_serves_its_client_certificate(
    compose_cluster: ComposeCluster,
) -> None:
    address = compose_cluster.broker_addresses()["broker1:9092"]
    assert compose_cluster.tls is not None
    with ClientApiClient(address, timeout_s=5) as plain, pytest.raises(RpcUnavailable):
        plain.metadata()
    log = event_log_path(compose_cluster.run_dir, "broker1")

    def refused() -> list[dict[str, object]]:
        return [
            e
            for e in read_events(log)
            if e["kind"] == "tls_handshake_refused" and e["reason"] == "not a TLS client"
        ]

    wait_until(refused, 15, "broker1 recorded no refused plaintext handshake")
    with ClientApiClient(address, timeout_s=10, tls=compose_cluster.tls) as secure:
        assert {b.id for b in secure.metadata().brokers} == {1, 2, 3}
    zk = compose_cluster.zk()
    try:
        registered = KafkaZkClient(zk).get_all_brokers().brokers
    finally:
        zk.stop()
        zk.close()
    assert {b.info.endpoint.security_protocol for b in registered.values()} == {"SSL"}
