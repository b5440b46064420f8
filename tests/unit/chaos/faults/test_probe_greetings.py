"""What the round-trip probe sends: a TLS ClientHello offering h2 to a broker's gRPC port
and to ZooKeeper's TLS-only client port, so that the server answers it at once."""

from __future__ import annotations

from chaos.faults.probe import GREETINGS, TLS_HANDSHAKE


def test_a_brokers_port_gets_a_client_hello_offering_h2() -> None:
    hello = GREETINGS[9092]()
    assert hello[0] == TLS_HANDSHAKE
    assert hello[5] == 1  # handshake type ClientHello
    assert b"h2" in hello  # the ALPN offer gRPC's TLS servers require


def test_zookeepers_tls_port_gets_a_client_hello() -> None:
    hello = GREETINGS[2181]()
    assert hello[0] == TLS_HANDSHAKE
    assert hello[5] == 1  # handshake type ClientHello
