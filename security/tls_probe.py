"""Whether a server accepts a client's TLS identity: one connection, a handshake, a
greeting and the first bytes of an answer. With TLS 1.3 a server that refuses the
client's certificate says so only after the client's side of the handshake is done, so a
completed handshake proves nothing until the server answers.

`ZOOKEEPER` greets with the four-letter word `srvr` (ZooKeeper's Netty connection
factory answers it after the handshake); `GRPC` with HTTP/2's connection preface and an
empty SETTINGS frame, which a gRPC server answers with its own SETTINGS. Blocks the
calling thread up to `timeout_s`; any thread.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

from security.tls_files import CA, TlsFiles

__all__ = ["GRPC", "ZOOKEEPER", "Greeting", "answer", "client_context", "refusal"]


@dataclass(frozen=True, slots=True)
class Greeting:
    """What a client sends first, and the ALPN protocols it offers."""

    data: bytes
    alpn: tuple[str, ...] = ()


ZOOKEEPER = Greeting(b"srvr")
#: HTTP/2's client connection preface, then a SETTINGS frame with no settings.
GRPC = Greeting(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]), ("h2",))


def client_context(directory: Path, role: str, ca: Path | None = None) -> ssl.SSLContext:
    """A client context presenting `role`'s certificate of `directory` and trusting only
    its `ca.crt` (or the bundle `ca`)."""
    files = TlsFiles(directory)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(cafile=str(ca or files.cert(CA)))
    context.load_cert_chain(str(files.cert(role)), str(files.key(role)))
    return context


def answer(
    address: tuple[str, int],
    server_name: str,
    context: ssl.SSLContext,
    greeting: Greeting,
    timeout_s: float = 5.0,
    *,
    whole: bool = False,
) -> bytes:
    """The server's first bytes of answer to `greeting` over TLS with `context` (its
    certificate checked against `server_name`; the context is given the greeting's ALPN
    protocols), or with `whole` everything until it closes. `OSError` when it cannot be
    reached, `ssl.SSLError` when the handshake or the client's certificate is refused."""
    if greeting.alpn:
        context.set_alpn_protocols(list(greeting.alpn))
    chunks = []
    with (
        socket.create_connection(address, timeout=timeout_s) as raw,
        context.wrap_socket(raw, server_hostname=server_name) as tls,
    ):
        tls.sendall(greeting.data)
        while chunk := tls.recv(4096):
            chunks.append(chunk)
            if not whole:
                break
    return b"".join(chunks)


def refusal(
    address: tuple[str, int],
    server_name: str,
    context: ssl.SSLContext,
    greeting: Greeting,
    timeout_s: float = 5.0,
) -> str | None:
    """None when the server at `address` completes a handshake with `context` and answers
    `greeting` (`answer`); else why not."""
    try:
        if not answer(address, server_name, context, greeting, timeout_s):
            return "closed without an answer"
    except ssl.SSLCertVerificationError as exc:
        return f"its certificate is not trusted: {exc.verify_message}"
    except ssl.SSLError as exc:
        return f"TLS refused: {exc.reason or exc}"
    except OSError as exc:
        return f"unreachable: {exc}"
    return None
