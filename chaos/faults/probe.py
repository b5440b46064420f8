"""Measurements taken from inside network namespaces with the host's Python.

Each probe is a small standard-library script run as `python -c` under `nsenter -t <pid>
-n`, so it sees exactly the container's interfaces and packet filter; it prints one JSON
value. Probes of several namespaces run at once (`run_all`), so a check over many links
costs about one connect timeout.

- `connects`: a TCP connect to each address, with a timeout: did it succeed, how long.
  Its sockets carry `BYPASS_MARK`, so a latency's redirect (which passes sockets so
  marked) leaves them alone: they test the link itself, not the latency's proxy, which
  accepts at once whatever the link does.
- `round_trips`: connect, send the port's greeting and wait for the answer to it (on
  ZooKeeper's TLS-only client port a ClientHello the server refuses at once with an
  alert; on a broker's gRPC port a TLS ClientHello answered by the ServerHello, or,
  when the first answer shows a plaintext server, the HTTP/2 preface and the server's
  acknowledgement of its SETTINGS, since an HTTP/2 server may speak first): the round
  trip of one request, a few times, after one that is not counted (it warms up the
  path: a proxy's first connection, the cold code of a JVM's TLS stack).
- `udp_burst`: send N datagrams to an address (for counters on the receiving side).
- `udp_flood`: send datagrams as fast as possible for some seconds (for a rate limit).

Thread-safety: runs on the caller's thread; probes are child processes.
"""

from __future__ import annotations

import contextlib
import json
import ssl
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chaos.errors import FaultFailed
from chaos.faults.netns import Netns

Address = tuple[str, int]

#: The firewall mark of the sockets a latency's redirect lets pass: its proxy's own
#: upstream connections, and the link probes.
BYPASS_MARK = 0x7E57

HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
TLS_HANDSHAKE = 0x16
"""The first byte of a TLS handshake record (a ClientHello, a ServerHello)."""


def client_hello() -> bytes:
    """A TLS ClientHello, as the first flight of a client without a certificate sends it;
    a TLS server answers it at once with its ServerHello."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])  # gRPC's servers refuse a TLS client without it
    outgoing = ssl.MemoryBIO()
    tls = context.wrap_bio(ssl.MemoryBIO(), outgoing)
    with contextlib.suppress(ssl.SSLWantReadError):  # it waits for the ServerHello
        tls.do_handshake()
    return outgoing.read()


def refused_hello() -> bytes:
    """A TLS 1.2 ClientHello offering only ARIA cipher suites, which Java's TLS does not
    implement: ZooKeeper's server answers it at once with a handshake_failure alert. A
    full ServerHello costs the JVM a key exchange, 10-80 ms of its CPU measured on the
    project's machine against 2-10 ms for the alert, and a round trip must time the
    path, not the server's work (`srvr` did, before the port was TLS only)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.maximum_version = ssl.TLSVersion.TLSv1_2
    context.set_ciphers("ARIA")
    outgoing = ssl.MemoryBIO()
    tls = context.wrap_bio(ssl.MemoryBIO(), outgoing)
    with contextlib.suppress(ssl.SSLWantReadError):  # it waits for the answer
        tls.do_handshake()
    return outgoing.read()


GREETINGS: Mapping[int, Callable[[], bytes]] = {2181: refused_hello, 9092: client_hello}
"""What a round-trip probe sends to a port so that the server answers at once."""

_CONNECTS = """
import json, socket, sys, threading, time
timeout = float(sys.argv[1]); out = {}; mark = int(sys.argv[3])
def go(host, port):
    s = socket.socket(); s.settimeout(timeout); t = time.monotonic()
    s.setsockopt(socket.SOL_SOCKET, 36, mark)
    try:
        s.connect((host, port)); out[f"{host}:{port}"] = [True, time.monotonic() - t, ""]
    except OSError as e:
        out[f"{host}:{port}"] = [False, time.monotonic() - t, type(e).__name__]
    finally:
        s.close()
ts = [threading.Thread(target=go, args=a) for a in json.loads(sys.argv[2])]
[t.start() for t in ts]; [t.join() for t in ts]
print(json.dumps(out))
"""

_ROUND_TRIPS = """
import json, socket, sys, time
host, port, greeting = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3])
preface = bytes.fromhex(sys.argv[7])
times = []
for i in range(int(sys.argv[4]) + 1):  # the first warms the path up and is not counted
    s = socket.socket(); s.settimeout(float(sys.argv[5]))
    if int(sys.argv[6]):
        s.setsockopt(socket.SOL_SOCKET, 36, int(sys.argv[6]))
    t = time.monotonic()
    try:
        s.connect((host, port)); s.sendall(greeting)
        if greeting[:1] == bytes([0x16]):  # a ClientHello: a TLS server answers at once
            first = s.recv(1)
            if not first:
                raise OSError("closed")
            if first not in (bytes([0x15]), bytes([0x16])):  # not TLS (an alert or a hello):
                # a plaintext HTTP/2 server, probed as one from now on
                greeting = preface
                continue
        elif greeting.startswith(b"PRI"):
            buf = b""
            while True:  # HTTP/2: until the server acknowledges our SETTINGS
                while len(buf) < 9:
                    more = s.recv(4096)
                    if not more:
                        raise OSError("closed")
                    buf += more
                size = int.from_bytes(buf[:3], "big")
                if buf[3] == 4 and buf[4] & 1:
                    break
                while len(buf) < 9 + size:
                    more = s.recv(4096)
                    if not more:
                        raise OSError("closed")
                    buf += more
                buf = buf[9 + size:]
        elif not s.recv(1):
            raise OSError("closed")
        if i:
            times.append(time.monotonic() - t)
    except OSError:
        pass
    finally:
        s.close()
print(json.dumps(sorted(times)))
"""

_UDP_BURST = """
import json, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); sent = 0
for _ in range(int(sys.argv[3])):
    try:
        s.sendto(b"x" * 64, (sys.argv[1], int(sys.argv[2]))); sent += 1
    except OSError:
        pass
print(json.dumps(sent))
"""

_UDP_FLOOD = """
import json, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.setblocking(False)
end = time.monotonic() + float(sys.argv[3]); sent = 0; start = time.monotonic()
while time.monotonic() < end:
    try:
        s.sendto(b"x" * 1200, (sys.argv[1], int(sys.argv[2]))); sent += 1
    except OSError:
        time.sleep(0.001)
print(json.dumps([sent, time.monotonic() - start]))
"""


def script(source: str, *args: str) -> list[str]:
    """The command line that runs a probe script with the host's Python."""
    return [sys.executable, "-c", source, *args]


def connects_argv(addresses: Sequence[Address], timeout_s: float) -> list[str]:
    """A probe that connects to every address at once."""
    return script(
        _CONNECTS, str(timeout_s), json.dumps([list(a) for a in addresses]), str(BYPASS_MARK)
    )


def round_trips_argv(address: Address, count: int, timeout_s: float, mark: int = 0) -> list[str]:
    """A probe that times `count` request round trips to `address` (from sockets with
    the firewall mark `mark`, unless 0); prints the sorted times that succeeded."""
    greeting = GREETINGS.get(address[1], lambda: b"\n")()
    host, port = address
    return script(
        _ROUND_TRIPS,
        host,
        str(port),
        greeting.hex(),
        str(count),
        str(timeout_s),
        str(mark),
        HTTP2_PREFACE.hex(),
    )


def udp_burst_argv(address: Address, count: int) -> list[str]:
    """A probe that sends `count` small datagrams to `address`."""
    return script(_UDP_BURST, address[0], str(address[1]), str(count))


def udp_flood_argv(address: Address, seconds: float) -> list[str]:
    """A probe that sends datagrams to `address` as fast as it can for `seconds`."""
    return script(_UDP_FLOOD, address[0], str(address[1]), str(seconds))


def run_all(probes: Sequence[tuple[Netns, list[str]]], timeout_s: float = 60.0) -> list[Any]:
    """Run every probe in its namespace at once; their JSON outputs, in order."""
    started = [
        subprocess.Popen(ns.argv(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for ns, argv in probes
    ]
    results = []
    for (ns, _), proc in zip(probes, started, strict=True):
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired as exc:
            proc.kill()
            proc.communicate()
            raise FaultFailed(f"probe in the netns of pid {ns.pid} timed out") from exc
        if proc.returncode != 0:
            raise FaultFailed(f"probe in the netns of pid {ns.pid} failed: {err.strip()}")
        results.append(json.loads(out))
    return results


def connects(probes: Mapping[Netns, Sequence[Address]], timeout_s: float) -> dict[Any, Any]:
    """For each namespace, each address -> (connected, seconds, error name)."""
    spaces = list(probes)
    outputs = run_all([(ns, connects_argv(probes[ns], timeout_s)) for ns in spaces])
    return {
        ns: {
            _address(key): (bool(ok), float(took), str(err)) for key, (ok, took, err) in out.items()
        }
        for ns, out in zip(spaces, outputs, strict=True)
    }


def _address(key: str) -> Address:
    host, _, port = key.rpartition(":")
    return host, int(port)
