"""Mutual TLS on the wire: the credentials of a channel and of a server.

A channel to a broker is plaintext when it has no identity, else TLS with the cluster's CA
as the only trusted root and the caller's own certificate and key. A server with an identity
demands a client certificate signed by that CA (`require_client_auth`): a plaintext
client, a client without a certificate or with one of another CA fails in the TLS
handshake, before any of the server's code runs. Target names are checked against the
server certificate's SANs (the compose service names, `localhost`, `127.0.0.1`).

The identity is anything with the three PEM fields (`security.tls_files.TlsIdentity`), so
that `rpc` depends on no project package above it. Any thread.
"""

from __future__ import annotations

from typing import Protocol

import grpc

from rpc.wire.options import CHANNEL_OPTIONS


class ChannelIdentity(Protocol):
    """What one party presents and trusts: the CA certificate, its own certificate and key
    (PEM)."""

    @property
    def ca_pem(self) -> bytes:
        """The cluster CA's certificate: the only root trusted."""
        ...

    @property
    def cert_pem(self) -> bytes:
        """This party's certificate, signed by the CA."""
        ...

    @property
    def key_pem(self) -> bytes:
        """This party's private key."""
        ...


def open_channel(target: str, tls: ChannelIdentity | None) -> grpc.Channel:
    """A channel to `target`: plaintext without `tls`, mutual TLS with it."""
    if tls is None:
        return grpc.insecure_channel(target, options=CHANNEL_OPTIONS)
    credentials = grpc.ssl_channel_credentials(
        root_certificates=tls.ca_pem, private_key=tls.key_pem, certificate_chain=tls.cert_pem
    )
    return grpc.secure_channel(target, credentials, options=CHANNEL_OPTIONS)


def server_credentials(tls: ChannelIdentity) -> grpc.ServerCredentials:
    """A server's credentials: its certificate, and every client must present one of the
    CA's (the handshake refuses anyone else)."""
    return grpc.ssl_server_credentials(
        [(tls.key_pem, tls.cert_pem)], root_certificates=tls.ca_pem, require_client_auth=True
    )
