"""What the round-trip probe sends: a TLS ClientHello offering h2 to a broker's gRPC port
(so that a TLS server answers it at once), ZooKeeper's `srvr` to 2181."""

from __future__ import annotations

from chaos.faults.probe import GREETINGS, HTTP2_PREFACE, TLS_HANDSHAKE, round_trips_argv


def test_a_brokers_port_gets_a_client_hello_offering_h2() -> None:
    hello = GREETINGS[9092]()
    assert hello[0] == TLS_HANDSHAKE
    assert hello[5] == 1  # handshake type ClientHello
    assert b"h2" in hello  # the ALPN offer gRPC's TLS servers require


def test_the_probe_carries_the_greeting_and_the_plaintext_fallback() -> None:
    argv = round_trips_argv(("10.0.0.2", 2181), 3, 1.0)
    assert argv[3:] == ["10.0.0.2", "2181", b"srvr".hex(), "3", "1.0", "0", HTTP2_PREFACE.hex()]
