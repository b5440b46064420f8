"""gRPC channel options shared by every server and client of the testbed: the message
size cap of `rpc.limits`, set explicitly for both directions (docs/security.md)."""

from __future__ import annotations

from typing import Any

from rpc.limits import MAX_MESSAGE_BYTES

CHANNEL_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
]

__all__ = ["CHANNEL_OPTIONS", "MAX_MESSAGE_BYTES"]
