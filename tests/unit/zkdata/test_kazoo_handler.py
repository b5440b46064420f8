"""`zkdata.kazoo_handler`: `poll_select` keeps kazoo's `selector_select` contract (ready to
read, ready to write, a timeout, a closed descriptor, bad timeouts), on a socket pair;
`PollingHandler` is what kazoo's connection thread calls. The session itself runs on real
ZooKeeper in every integration test."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest
from kazoo.handlers.threading import SequentialThreadingHandler
from kazoo.handlers.utils import selector_select

from zkdata.kazoo_handler import PollingHandler, poll_select


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    a, b = socket.socketpair()
    yield a, b
    a.close()
    b.close()


def test_nothing_to_read_waits_out_the_timeout(pair: tuple[socket.socket, socket.socket]) -> None:
    a, _ = pair
    started = time.monotonic()
    assert poll_select([a], [], [], 0.05) == ([], [], [])
    assert time.monotonic() - started >= 0.04


def test_a_socket_with_data_is_readable_and_a_connected_one_writable(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    a, b = pair
    b.send(b"x")
    assert poll_select([a, b], [a], [], 1.0) == ([a], [a], [])
    assert poll_select([a, b], [], [], 1.0) == selector_select([a, b], [], [], 1.0)
    assert poll_select([], [a, b], [], 1.0) == selector_select([], [a, b], [], 1.0)


def test_a_peer_that_closed_makes_the_socket_readable(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    """A hang-up is reported as readable, so the reader's recv sees the end (kazoo then
    drops the connection), as select(2) reports it."""
    a, b = pair
    b.close()
    readable, _, _ = poll_select([a], [], [], 1.0)
    assert readable == [a]
    assert a.recv(1) == b""


def test_a_closed_socket_is_an_invalid_descriptor(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    a, _ = pair
    a.close()
    with pytest.raises(ValueError, match="Invalid file descriptor"):
        poll_select([a], [], [], 0.01)


@pytest.mark.parametrize(("timeout", "error"), [(-1, ValueError), ("1", TypeError)])
def test_a_bad_timeout_is_refused(
    pair: tuple[socket.socket, socket.socket], timeout: object, error: type[Exception]
) -> None:
    a, _ = pair
    with pytest.raises(error):
        poll_select([a], [], [], timeout)  # type: ignore[arg-type]


def test_descriptors_above_select_limit_are_polled() -> None:
    """A broker holds a file per partition log: descriptors far above select(2)'s 1,024."""
    held = [socket.socket() for _ in range(1100)]
    a, b = socket.socketpair()
    try:
        assert a.fileno() > 1024
        b.send(b"x")
        assert poll_select([a], [], [], 1.0) == ([a], [], [])
    finally:
        for s in (*held, a, b):
            s.close()


def test_the_handler_is_kazoos_threading_handler_with_this_select(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    a, b = pair
    handler = PollingHandler()
    assert isinstance(handler, SequentialThreadingHandler)
    b.send(b"x")
    assert handler.select([a], [], [], 1.0) == ([a], [], [])
