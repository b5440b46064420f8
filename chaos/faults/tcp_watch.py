"""Which of a client's TCP connections carries a request that has gone unanswered, from
what the kernel keeps of each socket (`ss -tin`: bytes sent and received, milliseconds
since the last send and the last receive).

A request is unanswered when at least `min_bytes` left the socket after its last receive
and `settle_ms` have passed since: a ZooKeeper follower answers a read or a ping within a
millisecond or two, so what waits longer is a write that its leader has not committed
(or a request queued behind one). A ping alone (12 bytes) is never taken for one.

`parse_ss` reads the output of `ss -H -t -i -n state established ...`; `UnansweredWatch`
follows the connections of one client across such samples. Bytes cannot tell a request
answered from one sent in the same burst as a read whose answer came back at once (the
broker reads a state, then writes it): `parse_cons` reads what a ZooKeeper follower
itself holds unanswered for each client connection (`queued` in its `cons` listing),
which a follower's forwarded write keeps at 1 or more until its leader commits it.
Pure; any single thread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

#: Bytes that must have left after the last receive: more than a ping (4 bytes of length,
#: 8 of header); every ZooKeeper request that names a path is longer.
MIN_REQUEST_BYTES = 20
#: How long the bytes must have waited: a follower's answer comes well within this.
SETTLE_MS = 100

_ADDRESS = re.compile(r"^\[?([0-9A-Fa-f.:]+?)\]?:(\d+)$")
_CONS = re.compile(r"^/\[?([0-9A-Fa-f.:]+?)\]?:(\d+)\[\d+\]\(queued=(\d+)")
_FIELD = re.compile(r"\b(bytes_sent|bytes_received|lastsnd|lastrcv):(\d+)")


@dataclass(frozen=True, slots=True)
class TcpConnection:
    """One established connection as `ss -ti` shows it."""

    local_port: int
    peer_ip: str
    peer_port: int
    bytes_sent: int
    bytes_received: int
    last_send_ms: int
    last_receive_ms: int


def parse_ss(text: str) -> list[TcpConnection]:
    """The connections of `ss -H -t -i -n state established` output: a line of queues
    and addresses, then an indented line of socket details, per connection. Lines that
    do not parse are skipped (a connection closing while `ss` read it)."""
    found: list[TcpConnection] = []
    addresses: tuple[int, str, int] | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            addresses = _addresses(line)
            continue
        if addresses is None:
            continue
        fields = {name: int(value) for name, value in _FIELD.findall(line)}
        if "lastsnd" in fields and "lastrcv" in fields:
            local_port, peer_ip, peer_port = addresses
            found.append(
                TcpConnection(
                    local_port,
                    peer_ip,
                    peer_port,
                    fields.get("bytes_sent", 0),
                    fields.get("bytes_received", 0),
                    fields["lastsnd"],
                    fields["lastrcv"],
                )
            )
        addresses = None
    return found


def _addresses(line: str) -> tuple[int, str, int] | None:
    words = line.split()
    ends = [m for w in words if (m := _ADDRESS.match(w)) is not None]
    if len(ends) < 2:
        return None
    local, peer = ends[-2], ends[-1]
    return int(local.group(2)), peer.group(1), int(peer.group(2))


def parse_cons(text: str) -> dict[tuple[str, int], int]:
    """`(client ip, client port) -> queued` from a server's `cons` listing, whose lines
    read `/172.18.0.5:41314[1](queued=0,recved=24,sent=24,...)`; other lines are skipped."""
    found: dict[tuple[str, int], int] = {}
    for line in text.splitlines():
        match = _CONS.match(line.strip())
        if match:
            found[(match.group(1), int(match.group(2)))] = int(match.group(3))
    return found


class UnansweredWatch:
    """Follows one client's connections through successive samples. A connection is
    taken as answered up to the bytes it had sent when it last received after sending
    (or when first seen); `update` names a connection whose later bytes wait unanswered
    (see the module docstring)."""

    def __init__(self, min_bytes: int = MIN_REQUEST_BYTES, settle_ms: int = SETTLE_MS) -> None:
        self._min_bytes = min_bytes
        self._settle_ms = settle_ms
        self._answered: dict[tuple[str, int, int], int] = {}
        self.settling = False

    def update(self, sample: Sequence[TcpConnection]) -> TcpConnection | None:
        """Take a new sample; the first connection with a request unanswered, if any.
        `settling` tells afterwards whether a request of this sample waits but has not
        waited `settle_ms` yet."""
        caught = None
        self.settling = False
        for conn in sample:
            key = (conn.peer_ip, conn.peer_port, conn.local_port)
            if key not in self._answered or conn.last_receive_ms <= conn.last_send_ms:
                self._answered[key] = conn.bytes_sent
                continue
            if conn.bytes_sent - self._answered[key] < self._min_bytes:
                continue
            if conn.last_send_ms < self._settle_ms:
                self.settling = True
            elif caught is None:
                caught = conn
        return caught

    def unanswered_bytes(self, conn: TcpConnection) -> int:
        """How many of `conn`'s bytes wait for an answer, by the last sample."""
        return conn.bytes_sent - self._answered.get(
            (conn.peer_ip, conn.peer_port, conn.local_port), conn.bytes_sent
        )
