"""`RpcServer`: a broker's gRPC server (BrokerControl and ClientApi on one port) behind a
small surface, so that `broker_node` never imports grpc. Built and stopped on the caller's
thread; handlers run on gRPC's worker threads.
"""

from __future__ import annotations

from concurrent import futures

import grpc

from rpc.wire.access import AccessPolicy, PeerCheck
from rpc.wire.control import BrokerControlHandler, add_broker_control_service
from rpc.wire.data import ClientApiHandler, add_client_api_service
from rpc.wire.options import CHANNEL_OPTIONS
from rpc.wire.tls import ChannelIdentity, server_credentials


class RpcServer:
    """A broker's gRPC server: the BrokerControl and ClientApi services on one port.

    `start` binds and serves on gRPC's worker threads (named `grpc-worker-N`); `stop` runs
    on the caller's thread and waits up to `grace_s` for calls in flight. With `tls` the
    port speaks only mutual TLS (`rpc.wire.tls`) and `access` decides, before any handler,
    which certificate may call what (`rpc.wire.access`); without it, plaintext.
    """

    def __init__(
        self,
        control: BrokerControlHandler,
        client_api: ClientApiHandler,
        *,
        workers: int,
        tls: ChannelIdentity | None = None,
        access: AccessPolicy | None = None,
    ) -> None:
        if (tls is None) != (access is None):
            raise ValueError("a TLS server needs an access policy, and only a TLS server has one")
        self._tls = tls
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="grpc-worker"),
            options=CHANNEL_OPTIONS,
            interceptors=[PeerCheck(access)] if access is not None else None,
        )
        add_broker_control_service(self._server, control)
        add_client_api_service(self._server, client_api)
        self.port = 0

    def start(self, host: str, port: int) -> int:
        """Bind `host:port` (0 picks a free port), start serving and return the port."""
        address = f"{host}:{port}"
        if self._tls is None:
            self.port = self._server.add_insecure_port(address)
        else:
            self.port = self._server.add_secure_port(address, server_credentials(self._tls))
        if self.port == 0:
            raise OSError(f"cannot bind {host}:{port}")
        self._server.start()
        return self.port

    def stop(self, grace_s: float = 1.0) -> None:
        """Stop serving; calls in flight get `grace_s` to finish."""
        self._server.stop(grace=grace_s).wait(grace_s + 1.0)
