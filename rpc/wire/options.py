"""gRPC channel options shared by every server and client of the testbed: the message
size cap of `rpc.limits`, set explicitly for both directions (docs/security.md), and
Kafka's reconnection backoff (`reconnect.backoff.ms` 50, `reconnect.backoff.max.ms`
1000) instead of gRPC's (1 s growing to 120 s), so that a broker cut off for half a
minute is reached again within a second of the heal, as a Kafka broker would be.

`grpc.min_reconnect_backoff_ms` stays at gRPC's default (20 s): gRPC takes it as the
shortest time a connection attempt (TCP, TLS and HTTP/2 handshakes) may last, not as a
backoff. Set to the 50 ms backoff it would cap every attempt at about 1 s, and a broker
whose traffic is delayed 1.5 s (the `latency` fault) could never connect.
Constants only; any thread."""

from __future__ import annotations

from typing import Any

from rpc.limits import MAX_MESSAGE_BYTES

#: Kafka's `reconnect.backoff.ms` and `reconnect.backoff.max.ms`.
RECONNECT_BACKOFF_MS = 50
RECONNECT_BACKOFF_MAX_MS = 1000

CHANNEL_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.initial_reconnect_backoff_ms", RECONNECT_BACKOFF_MS),
    ("grpc.max_reconnect_backoff_ms", RECONNECT_BACKOFF_MAX_MS),
]

__all__ = ["CHANNEL_OPTIONS", "MAX_MESSAGE_BYTES"]
