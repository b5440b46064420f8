"""The latency fault: a delay on the connections a broker opens, without netem.

The kernel here has no netem, so the delay comes from a proxy (`chaos.faults.delay_proxy`)
started with the host's Python inside each target broker's network namespace. An
iptables nat OUTPUT rule per peer (every other service: zk servers on 2181, brokers on
9092), tagged with the fault id, redirects the broker's new connections to the proxy,
which holds every chunk the broker sends for `delay_ms` before forwarding it to the
original destination. Redirection only sees new connections, so start closes the broker's
existing connections to those peers (`ss -K`); its clients reconnect through the proxy.
Connections that peers open to the broker are not delayed.

took_effect measures, from inside the namespace, request round trips to each peer through
the redirect and around it (a socket with the proxy's firewall mark skips the rule): the
difference of the fastest of each is the added delay and must be near `delay_ms`; a peer
with no redirect of the fault (down when it started: a stopped container has no address)
is not judged. stop
deletes the rules and terminates the proxy, found by the fault id in its command line, so
a rebuilt fault (heal) finds it too; undone checks that neither is left.

Thread-safety: fault values are immutable; their methods run on the injector's thread.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from chaos.faults import delay_proxy
from chaos.faults.base import Check, FaultTarget
from chaos.faults.fields import BadFaultData
from chaos.faults.links import port, running_netns
from chaos.faults.netfault import NetworkFault
from chaos.faults.netns import leftovers_everywhere, netns_of
from chaos.faults.probe import BYPASS_MARK, round_trips_argv, run_all
from chaos.faults.proxy_process import tagged, terminate
from chaos.faults.rules import redirect

PROXY_MARK = BYPASS_MARK
PROXY_SCRIPT = Path(delay_proxy.__file__).resolve()
ROUND_TRIPS = 3
ROUND_TRIP_TIMEOUT_S = 5.0


@dataclass(frozen=True, slots=True)
class Latency(NetworkFault):
    """Delay by `delay_ms` what the target brokers send on the connections they open."""

    delay_ms: int = 100
    KIND: ClassVar[str] = "latency"

    def __post_init__(self) -> None:
        NetworkFault.__post_init__(self)
        if not 1 <= self.delay_ms <= 10_000:
            raise BadFaultData(f"delay_ms must be in 1..10000, got {self.delay_ms}")

    def proxy_tag(self, broker: str) -> str:
        """The `--tag` of the proxy serving one broker."""
        return f"{self.fault_id}.{broker}"

    def start(self, cluster: FaultTarget) -> None:
        """Per broker: (re)start its proxy, redirect its connections to every peer to it,
        close the connections it already has to them."""
        self.stop(cluster)
        for broker in self.targets:
            netns = running_netns(cluster, broker)
            command = [
                sys.executable, str(PROXY_SCRIPT), "--delay-ms", str(self.delay_ms),
                "--mark", hex(PROXY_MARK), "--tag", self.proxy_tag(broker), "--daemon",
            ]  # fmt: skip
            started = json.loads(netns.run(command).stdout)
            peers = [(cluster.ip(s), port(s)) for s in self._peers(cluster, broker)]
            netns.add_rules(
                self.fault_id, [redirect(ip, p, started["port"], PROXY_MARK) for ip, p in peers]
            )
            for ip, p in peers:
                netns.kill_connections(ip, p)

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Round trips through the redirect exceed those around it by about `delay_ms`."""
        probes = []
        pairs = []
        skipped = []
        for broker in self.targets:
            netns = running_netns(cluster, broker)
            sent = redirected(netns.leftovers(self.fault_id))
            for peer in self._peers(cluster, broker):
                if cluster.status(peer) != "running":
                    continue  # a paused peer answers nobody, proxy or not
                address = (cluster.ip(peer), port(peer))
                if address not in sent:
                    # down when the redirects were laid (another fault's kill), so never
                    # redirected: its links are not this fault's to delay
                    skipped.append(f"{broker}->{peer}")
                    continue
                for mark in (0, PROXY_MARK):
                    probes.append(
                        (netns, round_trips_argv(address, ROUND_TRIPS, ROUND_TRIP_TIMEOUT_S, mark))
                    )
                pairs.append(f"{broker}->{peer}")
        times = run_all(probes)
        checks = []
        judged = 0
        for i, pair in enumerate(pairs):
            delayed, direct = times[2 * i], times[2 * i + 1]
            if not direct:
                # cut around the proxy too: another fault (an isolation) holds the link,
                # and no round trip can show this one's delay on it
                checks.append(Check(True, f"{pair}: cut around the proxy too, not judged"))
                continue
            judged += 1
            if not delayed:
                checks.append(
                    Check(False, f"{pair}: no round trip (via {delayed}, around {direct})")
                )
                continue
            # the fastest of each: a loaded host only ever adds to a round trip, and the
            # proxy never delivers before the delay, so the minima are the least noisy
            via_ms, around_ms = min(delayed) * 1000, min(direct) * 1000
            checks.append(
                Check(self.plausible(via_ms, around_ms), f"{pair} +{via_ms - around_ms:.0f} ms")
            )
        if pairs and not judged:
            checks.append(Check(False, "every link is cut around the proxy: nothing to judge"))
        if skipped:
            checks.append(Check(True, f"not redirected, not judged: {', '.join(skipped)}"))
        running = self.proxies()
        alive = Check(len(running) >= len(self.targets), f"proxies {sorted(running)}")
        for broker in self.targets:
            netns = running_netns(cluster, broker)
            peers = redirected(netns.leftovers(self.fault_id))
            shown = netns.run(["ss", "-Htnp", "state", "established"]).stdout
            straight = unproxied(shown, peers, set(running))
            checks.append(Check(not straight, f"{broker} straight to peers: {straight}"))
        return Check.all([alive, *checks])

    def plausible(self, via_ms: float, around_ms: float) -> bool:
        """Whether round trips through the proxy (`via_ms`) and around it (`around_ms`)
        show the delay. The proxy connects upstream while it holds the first chunk, so
        that connect hides inside the delay: through the proxy a round trip takes at
        least about the delay, and at least half of it more than around the proxy; and
        not much more than the delay on top of the direct round trip (a second delay
        stacked on the first would double it; a loaded host adds up to a few hundred ms
        to the proxy's own turn)."""
        delay = self.delay_ms
        added = via_ms - around_ms
        return via_ms >= 0.9 * delay and 0.5 * delay <= added <= delay + max(250, delay)

    def stop(self, cluster: FaultTarget) -> None:
        """Delete the redirects everywhere, then terminate the fault's proxies."""
        self.remove_rules(cluster)
        for pid in self.proxies():
            terminate(pid)

    def undone(self, cluster: FaultTarget) -> Check:
        """No redirect and no proxy of the fault left."""
        left = leftovers_everywhere(cluster, self.fault_id)
        proxies = self.proxies()
        if left or proxies:
            return Check(False, f"left: rules {left}, proxies {sorted(proxies)}")
        return Check(True, f"no redirect tagged {self.fault_id} and no proxy left")

    def params(self) -> dict[str, Any]:
        """The delay."""
        return {"delay_ms": self.delay_ms}

    def proxies(self) -> dict[int, str]:
        """The host's live proxy processes of this fault: pid -> tag."""
        return tagged(str(PROXY_SCRIPT), f"{self.fault_id}.")

    def _peers(self, cluster: FaultTarget, broker: str) -> list[str]:
        return [s for s in cluster.services() if s != broker and netns_of(cluster, s)]


def redirected(lines: Iterable[str]) -> set[tuple[str, int]]:
    """The destinations a fault's redirect rules (`iptables -S` lines) send to its proxy
    (pure)."""
    found = set()
    for line in lines:
        to, dport = _DEST.search(line), _DPORT.search(line)
        if "REDIRECT" in line and to and dport:
            found.add((to.group(1), int(dport.group(1))))
    return found


_DEST = re.compile(r"-d (\d+\.\d+\.\d+\.\d+)(?:/32)?\b")
_DPORT = re.compile(r"--dport (\d+)")


def unproxied(ss_output: str, peers: set[tuple[str, int]], proxies: set[int]) -> list[str]:
    """The connections to `peers` that bypass the proxies, from `ss -Htnp state
    established` (pure). A redirected socket still shows its original peer; it counts as
    proxied when a proxy's socket has it as its own peer."""
    rows = []
    for line in ss_output.splitlines():
        words = line.split()
        if len(words) >= 5:
            owner = words[4]
            rows.append((words[2], words[3], any(f"pid={pid}," in owner for pid in proxies)))
    accepted = {remote for _, remote, by_proxy in rows if by_proxy}
    straight = []
    for local, remote, by_proxy in rows:
        host, _, number = remote.rpartition(":")
        if not by_proxy and (host, int(number)) in peers and local not in accepted:
            straight.append(f"{local}->{remote}")
    return straight
