"""Reading `ss -ti` and telling a request that waits for its answer from one answered at
once or a ping."""

from __future__ import annotations

from chaos.faults.tcp_watch import TcpConnection, UnansweredWatch, parse_cons, parse_ss

SS = (
    "0      0      172.18.0.5:45678 172.18.0.2:2181\n"
    "\t cubic wscale:7,7 rto:204 rtt:0.5/0.25 mss:1448 cwnd:10 bytes_sent:1234 "
    "bytes_acked:1235 bytes_received:2345 segs_out:40 segs_in:39 send 231Mbps "
    "lastsnd:120 lastrcv:900 lastack:120 pacing_rate 460Mbps\n"
    "0      0      [::ffff:172.18.0.5]:40000 [::ffff:172.18.0.3]:2181\n"
    "\t cubic rto:204 lastsnd:5 lastrcv:5 lastack:5\n"
)


def conn(
    sent: int, received: int, last_send: int, last_receive: int, port: int = 45678
) -> TcpConnection:
    return TcpConnection(port, "172.18.0.2", 2181, sent, received, last_send, last_receive)


def test_parse_reads_addresses_and_counters_of_each_connection() -> None:
    first, second = parse_ss(SS)
    assert first == TcpConnection(45678, "172.18.0.2", 2181, 1234, 2345, 120, 900)
    assert (second.local_port, second.peer_ip, second.peer_port) == (
        40000,
        "::ffff:172.18.0.3",
        2181,
    )
    assert (second.bytes_sent, second.bytes_received) == (0, 0)


def test_parse_skips_lines_it_cannot_read() -> None:
    assert parse_ss("garbage\n\t lastsnd:1 lastrcv:2\n\t orphan details\n") == []
    assert parse_ss("") == []


def test_a_write_left_unanswered_is_caught_once_it_has_waited() -> None:
    watch = UnansweredWatch(min_bytes=20, settle_ms=100)
    assert watch.update([conn(1000, 500, 800, 700)]) is None  # first sight: answered
    assert watch.update([conn(1140, 500, 40, 780)]) is None  # too fresh
    caught = watch.update([conn(1140, 500, 150, 890)])
    assert caught is not None
    assert caught.local_port == 45678
    assert watch.unanswered_bytes(caught) == 140


def test_a_ping_alone_is_not_a_request() -> None:
    watch = UnansweredWatch(min_bytes=20, settle_ms=100)
    watch.update([conn(1000, 500, 800, 700)])
    assert watch.update([conn(1012, 500, 400, 1100)]) is None


def test_a_request_answered_before_the_sample_moves_the_mark() -> None:
    watch = UnansweredWatch(min_bytes=20, settle_ms=100)
    watch.update([conn(1000, 500, 800, 700)])
    assert watch.update([conn(1100, 600, 300, 290)]) is None  # read sent and answered
    assert watch.update([conn(1112, 600, 150, 440)]) is None  # then only a ping waits


def test_each_connection_is_followed_on_its_own() -> None:
    watch = UnansweredWatch(min_bytes=20, settle_ms=100)
    watch.update([conn(1000, 500, 800, 700, port=1)])
    # a new connection is taken as answered when first seen, the old one has gone
    assert watch.update([conn(5000, 100, 500, 900, port=2)]) is None
    caught = watch.update([conn(5060, 100, 200, 1100, port=2)])
    assert caught is not None
    assert caught.local_port == 2


def test_a_request_too_fresh_to_tell_is_settling() -> None:
    watch = UnansweredWatch(min_bytes=20, settle_ms=100)
    watch.update([conn(1000, 500, 800, 700)])
    assert watch.update([conn(1140, 500, 30, 780)]) is None
    assert watch.settling
    assert watch.update([conn(1140, 500, 130, 880)]) is not None
    assert not watch.settling


def test_cons_gives_each_client_connection_its_queued_requests() -> None:
    listing = (
        " /172.18.0.7:54352[1](queued=2,recved=24,sent=24,sid=0x2000,lop=SETD,est=17)\n"
        " /172.18.0.1:45950[0](queued=0,recved=1,sent=0)\n"
        " /[0:0:0:0:0:0:0:1]:40100[1](queued=0,recved=3,sent=3)\n"
        "\n"
        "not a connection line\n"
    )
    assert parse_cons(listing) == {
        ("172.18.0.7", 54352): 2,
        ("172.18.0.1", 45950): 0,
        ("0:0:0:0:0:0:0:1", 40100): 0,
    }
