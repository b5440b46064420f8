"""Mutual TLS on a broker's gRPC port: who is refused, where, and what the broker records.

Setup: a fresh chroot on the shared ensemble; the cluster's CA and certificates made by
`security.tls.ensure_tls` in the test's directory, a second CA beside them; one broker
process started with `--tls-dir` (it becomes the controller, so its controller also talks
to it over TLS).

Steps and validation: a plaintext client and a client holding the other CA's broker
certificate each send a LeaderAndIsr with a huge controller epoch: both calls fail as
unavailable (the handshake refused them), the broker obeyed nothing (a later UpdateMetadata
at epoch 5 from the cluster's broker certificate is accepted, which an obeyed huge epoch
would fence) and its event log holds a `tls_handshake_refused` per refusal with the peer's
address. The cluster's client certificate may read Metadata but not send LeaderAndIsr
(PERMISSION_DENIED, `unauthorized_request`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors, RpcFenced, RpcUnavailable
from rpc.wire import BrokerControlClient, ClientApiClient
from security.tls import ensure_tls
from security.tls_files import BROKER, CLIENT, TlsIdentity, load_identity
from zkdata.client import KafkaZkClient

pytestmark = pytest.mark.integration

HUGE_EPOCH = 1_000_000


def _leader_and_isr(controller_epoch: int, broker_epoch: int) -> m.LeaderAndIsrRequest:
    state = m.LeaderAndIsrPartitionState(
        topic="t",
        partition=0,
        controller_epoch=controller_epoch,
        leader=1,
        leader_epoch=1,
        isr=(1,),
        zk_version=0,
        replicas=(1,),
    )
    return m.LeaderAndIsrRequest(m.ControlHeader(99, controller_epoch, broker_epoch), (state,))


def _impostor(cluster: Path, other: Path) -> TlsIdentity:
    """Trusts the cluster's CA, presents a broker certificate of another CA."""
    trusted = load_identity(cluster, BROKER)
    forged = load_identity(other, BROKER)
    return TlsIdentity(BROKER, trusted.ca_pem, forged.cert_pem, forged.key_pem)


def _of_kind(proc: BrokerProcess, kind: str) -> list[dict[str, Any]]:
    return [e for e in proc.events() if e["kind"] == kind]


@pytest.fixture
def tls_broker(
    brokers: Callable[..., BrokerProcess], zk_client: KazooClient, tmp_path: Path
) -> tuple[BrokerProcess, Path, Path]:
    """A TLS broker (the controller), its TLS directory, and another CA's."""
    cluster = ensure_tls(tmp_path / "secrets").files.directory
    other = ensure_tls(tmp_path / "other").files.directory
    proc = brokers(1, tls_dir=cluster)
    zk = KafkaZkClient(zk_client)
    wait_until(
        lambda: proc.port() is not None and zk.get_controller_id() == 1,
        30,
        lambda: "the TLS broker did not come up:\n" + proc.log_tail(),
    )
    return proc, cluster, other


def test_a_plaintext_client_and_another_cas_certificate_are_refused_before_any_handler(
    tls_broker: tuple[BrokerProcess, Path, Path], zk_client: KazooClient
) -> None:
    """Neither call reaches a handler: the huge epoch is not obeyed, and each refusal is
    a `tls_handshake_refused` event naming the peer."""
    proc, cluster, other = tls_broker
    address = f"127.0.0.1:{proc.port()}"
    broker = KafkaZkClient(zk_client).get_broker(1)
    assert broker is not None
    strangers = {
        "not a TLS client": None,
        # one who knows the cluster's CA certificate (it is no secret) but not its key
        "client certificate not trusted (not of the cluster CA)": _impostor(cluster, other),
    }
    for identity in strangers.values():
        with (
            BrokerControlClient(address, timeout_s=5, tls=identity) as client,
            pytest.raises(RpcUnavailable),
        ):
            client.leader_and_isr(_leader_and_isr(HUGE_EPOCH, broker.epoch))
    wait_until(
        lambda: {e["reason"] for e in _of_kind(proc, "tls_handshake_refused")} >= set(strangers),
        10,
        lambda: f"refusals recorded: {_of_kind(proc, 'tls_handshake_refused')}",
    )
    refused = _of_kind(proc, "tls_handshake_refused")
    assert all(e["peer"].startswith("ipv4:127.0.0.1:") for e in refused)
    epochs = [e.get("controller_epoch") for e in _of_kind(proc, "request_accepted")]
    assert HUGE_EPOCH not in epochs
    with BrokerControlClient(address, timeout_s=10, tls=load_identity(cluster, BROKER)) as client:
        answer = client.update_metadata(
            m.UpdateMetadataRequest(m.ControlHeader(99, 5, broker.epoch), (), ())
        )
    assert answer.error is Errors.NONE, "a refused request's controller epoch was obeyed"


def test_the_client_certificate_reads_metadata_but_may_not_act_as_controller(
    tls_broker: tuple[BrokerProcess, Path, Path], zk_client: KazooClient
) -> None:
    """The cluster's client certificate is served Metadata; its LeaderAndIsr is refused
    with PERMISSION_DENIED before the handler, as an `unauthorized_request` event."""
    proc, cluster, _ = tls_broker
    address = f"127.0.0.1:{proc.port()}"
    client_identity = load_identity(cluster, CLIENT)
    broker = KafkaZkClient(zk_client).get_broker(1)
    assert broker is not None
    with ClientApiClient(address, timeout_s=10, tls=client_identity) as api:
        # Metadata names the controller once its UpdateMetadata, sent over TLS, arrived.
        wait_until(lambda: api.metadata().controller_id == 1, 15, "no UpdateMetadata arrived")
    with BrokerControlClient(address, timeout_s=10, tls=client_identity) as control:
        with pytest.raises(RpcFenced) as refused:
            control.leader_and_isr(_leader_and_isr(HUGE_EPOCH, broker.epoch))
        assert refused.value.status == "PERMISSION_DENIED"
    [event] = _of_kind(proc, "unauthorized_request")
    assert event["identity"] == CLIENT
    assert event["method"] == "BrokerControl/LeaderAndIsr"
    assert event["peer"].startswith("ipv4:127.0.0.1:")
    accepted = [e.get("controller_epoch") for e in _of_kind(proc, "request_accepted")]
    assert HUGE_EPOCH not in accepted
