"""Refused TLS handshakes, as gRPC's own `handshaker` tracer records them.

A server with `require_client_auth` refuses a plaintext client, a client without a
certificate and one with a certificate of another CA inside gRPC's C core, during the
handshake: no Python code of the server runs, and gRPC Python offers no callback for it
(grpc/grpc#38665, #32893). The one record gRPC keeps is its tracer: with
`GRPC_TRACE=handshaker` and `GRPC_VERBOSITY=INFO` in the process's environment when grpc
is imported, the core logs every failed handshake to stderr with the peer's address.

`StderrTap` reads that record. It puts a pipe in front of file descriptor 2, and its thread
`grpc-trace-reader` forwards every line to the real stderr except gRPC's INFO lines (the
tracer's chatter), while `HandshakeTraceParser` recognises each server-side handshake
failure and hands it on as a `HandshakeFailure`. The format is gRPC's log text, not an
API: it is pinned with grpcio's version, and the integration tier's refusal tests fail if
it changes.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

#: What the process's environment must hold, when grpc is imported, for the tracer to log.
TRACE_ENV = {"GRPC_TRACE": "handshaker", "GRPC_VERBOSITY": "INFO"}

_HEADER = re.compile(r"^([IWEF])\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ (\S+):\d+\] (.*)$")
_STEP = re.compile(r"^CallNextHandshakerLocked: error=(.*)$")
_CONTINUATION = re.compile(r"^(|=== Source Location Trace: ===|\S+\.(cc|h):\d+|shutdown=.*)$")
_PEER = re.compile(r"grpc\.internal\.endpoint_peer_address=([^,}\s]+)")
_SERVER_SIDE = "grpc.internal.server_credentials="
#: A failure of the TLS exchange itself; a connection closed before it (a health probe's
#: TCP connect, a network fault) fails with "Handshake read failed" and is no refusal.
_REFUSED = "Ssl handshake failed"

#: OpenSSL's reason in the error -> what it means for the caller.
_REASONS = (
    ("WRONG_VERSION_NUMBER", "not a TLS client"),
    ("HTTP_REQUEST", "not a TLS client"),
    ("PEER_DID_NOT_RETURN_A_CERTIFICATE", "no client certificate"),
    ("CERTIFICATE_VERIFY_FAILED", "client certificate not trusted (not of the cluster CA)"),
)


def traced_environment(env: Mapping[str, str]) -> dict[str, str] | None:
    """The environment to start the process again with so that gRPC traces handshakes, or
    None when `env` already makes it do so. Pure."""
    tracers = {t.strip() for t in env.get("GRPC_TRACE", "").split(",") if t.strip()}
    verbosity = env.get("GRPC_VERBOSITY", "").upper()
    if "handshaker" in tracers and verbosity in ("INFO", "DEBUG"):
        return None
    traced = dict(env)
    traced["GRPC_TRACE"] = ",".join(sorted(tracers | {"handshaker"}))
    traced["GRPC_VERBOSITY"] = TRACE_ENV["GRPC_VERBOSITY"]
    return traced


@dataclass(frozen=True, slots=True)
class HandshakeFailure:
    """A TLS handshake the server refused: the peer (`ipv4:10.0.0.5:41234`), what the
    refusal means (`reason`) and gRPC's error text (`error`)."""

    peer: str
    reason: str
    error: str


def reason_of(error: str) -> str:
    """What a handshake error means for the caller. Pure."""
    for marker, reason in _REASONS:
        if marker in error:
            return reason
    return "TLS handshake failed"


class HandshakeTraceParser:
    """Turns the lines gRPC writes to stderr into handshake failures, and says which lines
    to pass on. Not thread-safe: one reader feeds it."""

    def __init__(self) -> None:
        self._pending: str | None = None
        self._in_info = False

    def feed(self, line: str) -> tuple[bool, HandshakeFailure | None]:
        """Take one line (without its newline): whether to forward it to the real stderr,
        and the failure it completes, if any."""
        header = _HEADER.match(line)
        if header is not None:
            level, _, message = header.groups()
            self._in_info = level == "I"
            step = _STEP.match(message)
            failed = step is not None and _REFUSED in step.group(1)
            self._pending = step.group(1) if step is not None and failed else None
            return not self._in_info, None
        rest = line.strip()
        if not (self._in_info and _CONTINUATION.match(rest)):
            self._in_info = False
            return True, None
        if self._pending is not None and rest.startswith("shutdown="):
            error, self._pending = self._pending, None
            peer = _PEER.search(line)
            if peer is not None and _SERVER_SIDE in line:
                return False, HandshakeFailure(peer.group(1), reason_of(error), error)
        return False, None


class StderrTap:
    """A pipe in front of file descriptor 2, read by the thread `grpc-trace-reader`."""

    def __init__(self, on_failure: Callable[[HandshakeFailure], None]) -> None:
        self._on_failure = on_failure
        self._parser = HandshakeTraceParser()
        self._original: int | None = None
        self._write: int | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Route fd 2 through the tap (main thread, once)."""
        read, self._write = os.pipe()
        self._original = os.dup(2)
        os.dup2(self._write, 2)
        self._thread = threading.Thread(
            target=self._run, args=(read,), name="grpc-trace-reader", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Give fd 2 back and let the reader drain the pipe (main thread)."""
        if self._original is None or self._write is None:
            return
        os.dup2(self._original, 2)
        os.close(self._write)
        self._write = None
        if self._thread is not None:
            self._thread.join(2.0)

    def _run(self, read: int) -> None:
        assert self._original is not None
        original = self._original
        with os.fdopen(read, "rb") as pipe:
            for raw in pipe:
                forward = True
                try:
                    line = raw.decode("utf-8", "replace").rstrip("\n")
                    forward, failure = self._parser.feed(line)
                    if failure is not None:
                        self._on_failure(failure)
                except Exception:  # the tap must never stop forwarding stderr
                    forward = True
                if forward:
                    _write_all(original, raw)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]
