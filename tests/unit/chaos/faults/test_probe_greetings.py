"""What the round-trip probe sends: a TLS ClientHello offering h2 to a broker's gRPC port,
and to ZooKeeper's TLS-only client port one it refuses at once (ARIA suites only), so
that the server answers either at once."""

from __future__ import annotations

from chaos.faults.probe import GREETINGS, TLS_HANDSHAKE


def test_a_brokers_port_gets_a_client_hello_offering_h2() -> None:
    hello = GREETINGS[9092]()
    assert hello[0] == TLS_HANDSHAKE
    assert hello[5] == 1  # handshake type ClientHello
    assert b"h2" in hello  # the ALPN offer gRPC's TLS servers require


def test_zookeepers_tls_port_gets_a_tls12_client_hello_of_aria_suites_only() -> None:
    hello = GREETINGS[2181]()
    assert hello[0] == TLS_HANDSHAKE
    assert hello[5] == 1  # handshake type ClientHello
    session_id = hello[43]
    at = 44 + session_id
    size = int.from_bytes(hello[at : at + 2], "big")
    suites = {hello[i : i + 2] for i in range(at + 2, at + 2 + size, 2)}
    suites.discard(b"\x00\xff")  # the renegotiation signal, not a cipher suite
    # ARIA only (0xC03C-0xC071): no TLS 1.3 suite (0x13xx), nothing Java implements
    assert suites
    assert all(0xC03C <= int.from_bytes(s, "big") <= 0xC071 for s in suites)
