"""`RpcServer`: a broker's gRPC server (BrokerControl and ClientApi on one port) behind a
small surface, so that `broker_node` never imports grpc.

It is a `grpc.aio` server whose event loop runs on its own thread (`grpc-aio`): handlers
written as plain functions run on the worker threads (`grpc-worker-N`), and coroutine
handlers (Produce) on the loop, where waiting for a future answer holds no thread. Built,
started and stopped on the caller's thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent import futures
from contextlib import nullcontext
from typing import Any, TypeVar

import grpc

from rpc.wire.access import AccessPolicy, PeerCheck
from rpc.wire.control_server import Around, BrokerControlHandler, add_broker_control_service
from rpc.wire.data import ClientApiHandler, add_client_api_service
from rpc.wire.options import CHANNEL_OPTIONS
from rpc.wire.tls import ChannelIdentity, server_credentials

T = TypeVar("T")


class RpcServer:
    """A broker's gRPC server: the BrokerControl and ClientApi services on one port.

    `start` binds and serves; `stop` waits up to `grace_s` for calls in flight, then ends
    the loop and its thread. With `tls` the port speaks only mutual TLS (`rpc.wire.tls`)
    and `access` decides, before any handler, which certificate may call what
    (`rpc.wire.access`); without it, plaintext. Each LeaderAndIsr and UpdateMetadata is
    decoded, handled and answered inside `control_around()`.
    """

    def __init__(
        self,
        control: BrokerControlHandler,
        client_api: ClientApiHandler,
        *,
        workers: int,
        tls: ChannelIdentity | None = None,
        access: AccessPolicy | None = None,
        control_around: Around = nullcontext,
    ) -> None:
        if (tls is None) != (access is None):
            raise ValueError("a TLS server needs an access policy, and only a TLS server has one")
        self._tls = tls
        self._pool = futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="grpc-worker"
        )
        self._loop = asyncio.new_event_loop()
        self._loop.set_default_executor(self._pool)
        self._thread = threading.Thread(target=self._loop.run_forever, name="grpc-aio", daemon=True)
        self._thread.start()
        self._server = self._call(self._build(control, client_api, access, control_around))
        self.port = 0

    async def _build(
        self,
        control: BrokerControlHandler,
        client_api: ClientApiHandler,
        access: AccessPolicy | None,
        control_around: Around,
    ) -> grpc.aio.Server:
        server = grpc.aio.server(
            migration_thread_pool=self._pool,
            options=CHANNEL_OPTIONS,
            interceptors=[PeerCheck(access)] if access is not None else None,
        )
        add_broker_control_service(server, control, control_around)
        add_client_api_service(server, client_api)
        return server

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def start(self, host: str, port: int) -> int:
        """Bind `host:port` (0 picks a free port), start serving and return the port."""
        address = f"{host}:{port}"
        if self._tls is None:
            self.port = self._server.add_insecure_port(address)
        else:
            self.port = self._server.add_secure_port(address, server_credentials(self._tls))
        if self.port == 0:
            raise OSError(f"cannot bind {host}:{port}")
        self._call(self._server.start())
        return self.port

    def stop(self, grace_s: float = 1.0) -> None:
        """Stop serving; calls in flight get `grace_s` to finish. Idempotent."""
        if not self._thread.is_alive():
            return
        try:
            self._call(self._server.stop(grace_s))
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(grace_s + 5.0)
            self._pool.shutdown(wait=False, cancel_futures=True)
