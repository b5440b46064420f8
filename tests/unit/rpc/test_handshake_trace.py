"""Refused TLS handshakes read from gRPC's `handshaker` trace (`HandshakeTraceParser`),
over lines as grpcio 1.85 writes them, and the environment that turns the tracer on."""

from __future__ import annotations

from rpc.wire.handshake_trace import (
    HandshakeFailure,
    HandshakeTraceParser,
    reason_of,
    traced_environment,
)

_ARGS = (
    " shutdown=false index=2, args={endpoint=0x7f, args={grpc.internal.endpoint_local_address="
    "ipv4:127.0.0.1:9092, grpc.internal.endpoint_peer_address=ipv4:10.0.0.9:51036, "
    "grpc.internal.security_connector=0x55, grpc.internal.server_credentials=0x56}, "
    "read_buffer.Length()=0, exit_early=0}"
)
_WRONG_VERSION = (
    "UNKNOWN: Ssl handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: error:100000f7:SSL "
    "routines:OPENSSL_internal:WRONG_VERSION_NUMBER: Invalid certificate verification context: OK"
)


def _record(error: str, args: str = _ARGS) -> list[str]:
    return [
        f"I1125 04:10:58.869495    2188 handshaker.cc:155] CallNextHandshakerLocked: error={error}",
        "=== Source Location Trace: === ",
        "src/core/util/status_helper.cc:68",
        args,
    ]


def _feed(lines: list[str]) -> tuple[list[str], list[HandshakeFailure]]:
    parser = HandshakeTraceParser()
    forwarded, failures = [], []
    for line in lines:
        forward, failure = parser.feed(line)
        if forward:
            forwarded.append(line)
        if failure is not None:
            failures.append(failure)
    return forwarded, failures


def test_a_refused_server_handshake_is_one_failure_and_nothing_is_forwarded() -> None:
    forwarded, failures = _feed(_record(_WRONG_VERSION))
    assert failures == [HandshakeFailure("ipv4:10.0.0.9:51036", "not a TLS client", _WRONG_VERSION)]
    assert forwarded == []


def test_a_client_side_failure_and_a_closed_socket_are_not_refusals() -> None:
    client_side = _ARGS.replace("grpc.internal.server_credentials=0x56", "x=1")
    closed = "UNAVAILABLE: Handshake read failed (Socket closed)"
    _, failures = _feed(_record(_WRONG_VERSION, client_side) + _record(closed))
    assert failures == []


def test_other_lines_reach_stderr_and_end_a_grpc_record() -> None:
    python_line = "2026-11-25 04:13:51,715 broker1 MainThread INFO broker_node: serving"
    warning = "W1125 04:13:26.402128    8646 log.cc:102] Log level INFO is not suitable"
    lines = [*_record(_WRONG_VERSION)[:2], python_line, warning, "Traceback (most recent call)"]
    forwarded, failures = _feed(lines)
    assert forwarded == [python_line, warning, "Traceback (most recent call)"]
    assert failures == []


def test_reasons_name_what_the_caller_lacked() -> None:
    assert reason_of("...PEER_DID_NOT_RETURN_A_CERTIFICATE...") == "no client certificate"
    assert reason_of("...CERTIFICATE_VERIFY_FAILED...").startswith("client certificate not")
    assert reason_of("something new") == "TLS handshake failed"


def test_the_tracer_is_added_to_the_environment_once() -> None:
    traced = traced_environment({"PATH": "/bin", "GRPC_TRACE": "tcp"})
    assert traced == {"PATH": "/bin", "GRPC_TRACE": "handshaker,tcp", "GRPC_VERBOSITY": "INFO"}
    assert traced_environment(traced) is None
