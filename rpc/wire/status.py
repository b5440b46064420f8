"""Transport failures mapped to `rpc.errors`: the one place that catches `grpc.RpcError`.

`mapped(target)` wraps a blocking stub call on the calling thread; whatever gRPC or
protobuf raises leaves it as an `rpc.errors.RpcError` subclass, so callers outside `rpc/`
never import grpc.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import grpc
from google.protobuf.message import DecodeError, EncodeError

from rpc.errors import (
    RpcClosed,
    RpcDeadlineExceeded,
    RpcError,
    RpcFailed,
    RpcFenced,
    RpcMalformed,
    RpcUnavailable,
)

_BY_STATUS: dict[grpc.StatusCode, type[RpcError]] = {
    grpc.StatusCode.UNAVAILABLE: RpcUnavailable,
    grpc.StatusCode.CANCELLED: RpcUnavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: RpcDeadlineExceeded,
    grpc.StatusCode.UNAUTHENTICATED: RpcFenced,
    grpc.StatusCode.PERMISSION_DENIED: RpcFenced,
    grpc.StatusCode.INVALID_ARGUMENT: RpcMalformed,
}


def from_grpc(target: str, exc: grpc.RpcError) -> RpcError:
    """The project's error for a gRPC failure of a call to `target`."""
    code = exc.code() if isinstance(exc, grpc.Call) else None
    if code is None:
        return RpcUnavailable(target, type(exc).__name__, str(exc))
    details = exc.details() if isinstance(exc, grpc.Call) else ""
    return _BY_STATUS.get(code, RpcFailed)(target, code.name, details or "")


@contextmanager
def mapped(target: str) -> Iterator[None]:
    """Run a stub call to `target`, turning transport and codec failures into `RpcError`."""
    try:
        yield
    except grpc.RpcError as exc:
        raise from_grpc(target, exc) from exc
    except (DecodeError, EncodeError) as exc:
        raise RpcMalformed(target, type(exc).__name__, str(exc)) from exc
    except ValueError as exc:
        if "closed channel" in str(exc):
            raise RpcClosed(target, "CLOSED", str(exc)) from exc
        raise RpcMalformed(target, type(exc).__name__, str(exc)) from exc
