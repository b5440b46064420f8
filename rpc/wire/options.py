"""gRPC channel options shared by every server and client of the testbed."""

from __future__ import annotations

from typing import Any

#: gRPC's default 4 MiB cap is reached near 120k partitions; control requests may be larger.
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
CHANNEL_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
]
