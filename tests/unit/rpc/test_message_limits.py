"""Every gRPC server and channel the testbed opens sets the message limit of `rpc.limits`
for both directions and Kafka's reconnection backoff, and the limits keep their order:
what the controller sends fits gRPC's default, and the cap holds the largest produce
batch the benchmark sends."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from bench.produce.options import MAX_BATCH_BYTES
from rpc import limits
from rpc.wire import BrokerControlClient, ClientApiClient, RpcServer
from rpc.wire.options import CHANNEL_OPTIONS

EXPECTED = {
    "grpc.max_send_message_length": limits.MAX_MESSAGE_BYTES,
    "grpc.max_receive_message_length": limits.MAX_MESSAGE_BYTES,
    "grpc.initial_reconnect_backoff_ms": 50,
    "grpc.max_reconnect_backoff_ms": 1000,
}


def test_the_options_set_both_directions() -> None:
    assert dict(CHANNEL_OPTIONS) == EXPECTED


def test_the_limits_keep_their_order() -> None:
    assert limits.CONTROL_REQUEST_MAX_BYTES <= limits.GRPC_DEFAULT_MAX_MESSAGE_BYTES
    assert limits.CONTROL_REQUEST_MAX_BYTES < limits.MAX_MESSAGE_BYTES
    assert MAX_BATCH_BYTES <= limits.MAX_MESSAGE_BYTES // 2


@pytest.mark.parametrize("client", [BrokerControlClient, ClientApiClient])
def test_every_channel_sets_the_limit(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, object]] = []
    real = grpc.insecure_channel

    def channel(target: str, options: Any = None, **kwargs: Any) -> grpc.Channel:
        seen.append(dict(options or ()))
        return real(target, options=options, **kwargs)

    monkeypatch.setattr(grpc, "insecure_channel", channel)
    client("unused.invalid:1").close()
    assert seen == [EXPECTED]


def test_the_server_sets_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, object]] = []
    real = grpc.aio.server

    def server(**kwargs: Any) -> grpc.aio.Server:
        seen.append(dict(kwargs.get("options") or ()))
        return real(**kwargs)

    monkeypatch.setattr(grpc.aio, "server", server)
    RpcServer(object(), object(), workers=1).stop(0)  # type: ignore[arg-type]
    assert seen == [EXPECTED]


def test_no_option_caps_how_long_a_connection_attempt_may_take() -> None:
    # gRPC reads min_reconnect_backoff_ms as the shortest connection attempt: set to the
    # 50 ms backoff it left a broker behind a 1.5 s delay unable to finish its handshake
    assert "grpc.min_reconnect_backoff_ms" not in dict(CHANNEL_OPTIONS)
