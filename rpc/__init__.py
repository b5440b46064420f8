"""The broker control plane on the wire: Kafka error codes (`errors`), request and response
value objects (`messages`) and their one protobuf/gRPC adapter (`wire`). Any thread."""

from rpc.errors import Errors

__all__ = ["Errors"]
