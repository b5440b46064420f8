"""A mutual-TLS `RpcServer` on loopback: who gets an answer, and that a refused caller
never reaches a handler. The certificates are made by `security.tls.ensure_tls` in
pytest's directory; a second CA plays the stranger."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rpc import messages as m
from rpc.errors import Errors, RpcFenced, RpcUnavailable
from rpc.testing import RecordingHandlers
from rpc.wire import AccessPolicy, BrokerControlClient, ClientApiClient, Refusal, RpcServer
from security.tls import ensure_tls
from security.tls_files import BROKER, CLIENT, TlsIdentity, broker_role, load_identity

UPDATE = m.UpdateMetadataRequest(m.ControlHeader(1, 1, 1), (), ())


class _Served:
    """The server's TLS directory, address, handlers and the refusals it reported."""

    def __init__(self, directory: Path, address: str, handlers: RecordingHandlers) -> None:
        self.directory = directory
        self.address = address
        self.handlers = handlers
        self.refusals: list[Refusal] = []


@pytest.fixture
def served(tmp_path: Path) -> Iterator[_Served]:
    directory = ensure_tls(tmp_path / "secrets").files.directory
    handlers = RecordingHandlers()
    refusals: list[Refusal] = []
    server = RpcServer(
        handlers,
        handlers,
        workers=4,
        tls=load_identity(directory, BROKER),
        access=AccessPolicy(frozenset({BROKER}), refusals.append),
    )
    port = server.start("127.0.0.1", 0)
    found = _Served(directory, f"127.0.0.1:{port}", handlers)
    found.refusals = refusals  # the policy's callback appends here
    try:
        yield found
    finally:
        server.stop(grace_s=0.1)


def test_the_broker_certificate_may_send_the_controllers_requests(served: _Served) -> None:
    tls = load_identity(served.directory, BROKER)
    with BrokerControlClient(served.address, timeout_s=5, tls=tls) as client:
        assert client.update_metadata(UPDATE).error is Errors.NONE
    assert served.handlers.ran == ["update_metadata"]


def test_the_client_certificate_reads_but_may_not_send_them(served: _Served) -> None:
    tls = load_identity(served.directory, CLIENT)
    with ClientApiClient(served.address, timeout_s=5, tls=tls) as api:
        assert api.metadata().controller_id == 1
    with (
        BrokerControlClient(served.address, timeout_s=5, tls=tls) as control,
        pytest.raises(RpcFenced) as refused,
    ):
        control.update_metadata(UPDATE)
    assert refused.value.status == "PERMISSION_DENIED"
    assert served.handlers.ran == ["metadata"]
    [refusal] = served.refusals
    assert (refusal.identity, refusal.method) == ("client", "BrokerControl/UpdateMetadata")
    assert "127.0.0.1" in refusal.peer


def test_a_broker_may_ask_its_own_controlled_shutdown_only(served: _Served) -> None:
    tls = load_identity(served.directory, broker_role(2))
    with BrokerControlClient(served.address, timeout_s=5, tls=tls) as control:
        assert control.controlled_shutdown(m.ControlledShutdownRequest(2, 5)).error is Errors.NONE
        with pytest.raises(RpcFenced) as refused:
            control.controlled_shutdown(m.ControlledShutdownRequest(3, 5))
    assert refused.value.status == "PERMISSION_DENIED"
    assert "CLUSTER_AUTHORIZATION_FAILED" in str(refused.value)
    assert served.handlers.ran == ["controlled_shutdown"]
    [refusal] = served.refusals
    assert (refusal.identity, refusal.method) == ("broker-2", "BrokerControl/ControlledShutdown")


def test_only_a_broker_fetches_as_a_follower(served: _Served) -> None:
    follower = m.FetchRequest((), replica_id=3)
    with ClientApiClient(
        served.address, timeout_s=5, tls=load_identity(served.directory, broker_role(3))
    ) as api:
        api.fetch(follower)
    with ClientApiClient(
        served.address, timeout_s=5, tls=load_identity(served.directory, CLIENT)
    ) as api:
        api.fetch(m.FetchRequest((), replica_id=-1))
        with pytest.raises(RpcFenced):
            api.fetch(follower)
    assert served.handlers.ran == ["fetch", "fetch"]
    assert [(r.identity, r.method) for r in served.refusals] == [("client", "ClientApi/Fetch")]


def test_each_call_is_checked_though_a_methods_handler_is_wrapped_once(served: _Served) -> None:
    broker, client = (
        load_identity(served.directory, BROKER),
        load_identity(served.directory, CLIENT),
    )
    for _ in range(2):
        with BrokerControlClient(served.address, timeout_s=5, tls=broker) as control:
            assert control.update_metadata(UPDATE).error is Errors.NONE
        with (
            BrokerControlClient(served.address, timeout_s=5, tls=client) as control,
            pytest.raises(RpcFenced),
        ):
            control.update_metadata(UPDATE)
    assert served.handlers.ran == ["update_metadata", "update_metadata"]
    assert [r.identity for r in served.refusals] == ["client", "client"]


def test_plaintext_and_another_cas_certificate_fail_in_the_handshake(
    served: _Served, tmp_path: Path
) -> None:
    other = ensure_tls(tmp_path / "other").files.directory
    trusted = load_identity(served.directory, BROKER)
    forged = load_identity(other, BROKER)
    impostor = TlsIdentity(BROKER, trusted.ca_pem, forged.cert_pem, forged.key_pem)
    for tls in (None, impostor):
        with (
            BrokerControlClient(served.address, timeout_s=5, tls=tls) as client,
            pytest.raises(RpcUnavailable),
        ):
            client.update_metadata(UPDATE)
    assert served.handlers.ran == []
    assert served.refusals == []  # the handshake refused them; no call was seen


def test_a_tls_server_needs_an_access_policy(tmp_path: Path) -> None:
    directory = ensure_tls(tmp_path).files.directory
    handlers = RecordingHandlers()
    with pytest.raises(ValueError, match="access policy"):
        RpcServer(handlers, handlers, workers=1, tls=load_identity(directory, BROKER))
