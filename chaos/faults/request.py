"""The `request` fault: a control-plane proxy between the controller and one broker that
drops, delays, duplicates or reorders chosen LeaderAndIsr, UpdateMetadata and StopReplica
requests (`chaos.faults.request_plan` says which and how) and records each one it acted on.

start finds the controller (`/controller`) and starts the proxy (`chaos.faults.request_proxy`)
with the project's own Python inside the controller's network namespace, with the
cluster's TLS material (the proxy terminates the brokers' mutual TLS with the broker
certificate of the cluster's CA, and dials the target with it). An iptables nat OUTPUT
rule tagged with the fault id redirects the controller's new connections to the target's
gRPC port to the proxy, except the proxy's own (it runs as another user than the broker);
start then closes the connections the controller's process already has to the target
(`ss -K`), so that its gRPC channel reconnects through the proxy. The replica fetchers of
the controller's broker reconnect through it too, and pass untouched.

The proxy appends each request it acted on to a record file on the host, named after the
project and the fault id, so that a fault rebuilt from its description finds it: took
effect is the first record (`effect="acted"`, the default: a scenario that needs a request
acted on is not exercised without one), or, with `effect="armed"`, already the proxy
running with the redirect in place (what the generators draw: whether a control request
comes while the fault lasts depends on what the cluster does, and a fault that acted on
none was still in effect); `trace()` returns them all (the injector writes them to
`traces/<fault id>.jsonl`). stop deletes the rule and terminates the proxy (found by its
tag, the project and the fault id, in its command line); the controller's channel,
cut from the proxy, reconnects straight to the broker. undone checks that neither is left.

A controller that moves while the fault lasts talks to the broker straight: the proxy
stays with the namespace it was started in.

Thread-safety: fault values are immutable; their methods run on the injector's thread.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

from chaos.errors import FaultFailed, UnknownTarget
from chaos.faults.base import Check, FaultTarget
from chaos.faults.fields import BadFaultData, no_extra_fields, targets_from
from chaos.faults.links import BROKER_PORT, broker_id, running_netns
from chaos.faults.netfault import NetworkFault
from chaos.faults.netns import leftovers_everywhere
from chaos.faults.proxy_process import tagged, terminate
from chaos.faults.request_plan import KINDS, RequestPlan, parse_kinds
from chaos.faults.rules import redirect_unless_owner

#: The proxy's module, run with `python -m` (also how its processes are found).
PROXY_MODULE = "chaos.faults.request_proxy"
#: The repository root, on the proxy's PYTHONPATH.
ROOT = Path(__file__).resolve().parents[2]
#: Where the proxies' record files live on the host.
RECORD_DIR = Path(tempfile.gettempdir()) / "testbed-chaos-request"
_FIELDS = {
    "targets", "action", "kinds", "count", "probability", "delay_ms", "hold_s", "seed", "effect"
}  # fmt: skip
#: When a request fault is in effect: once it acted on a request, or once it is armed.
EFFECTS = ("acted", "armed")


@dataclass(frozen=True, slots=True)
class RequestFault(NetworkFault):
    """Act on the controller's requests to the one target broker (module docstring)."""

    action: str = "duplicate"
    kinds: str = "all"
    count: int = 1
    probability: float = 1.0
    delay_ms: int = 2000
    hold_s: float = 30.0
    seed: int = 0
    effect: str = "acted"
    KIND: ClassVar[str] = "request"
    _trace: list[dict[str, Any]] = field(
        default_factory=list, compare=False, hash=False, repr=False
    )

    def __post_init__(self) -> None:
        NetworkFault.__post_init__(self)
        if len(self.targets) != 1:
            raise BadFaultData(f"request acts on one broker, got {self.targets}")
        broker_id(self.targets[0])  # UnknownTarget for a service that is not a broker
        if self.effect not in EFFECTS:
            raise BadFaultData(f"request: effect must be one of {EFFECTS}, got {self.effect!r}")
        self.plan()

    def plan(self) -> RequestPlan:
        """The proxy's plan."""
        return RequestPlan(
            self.action, parse_kinds(self.kinds), self.count, self.probability,
            self.delay_ms, self.hold_s, self.seed,
        )  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from `describe()`; unknown fields are refused."""
        no_extra_fields(data, _FIELDS, cls.KIND)
        params = {k: data[k] for k in _FIELDS - {"targets"} if k in data}
        try:
            return cls(targets_from(data, cls.KIND), **params)
        except TypeError as exc:
            raise BadFaultData(f"{cls.KIND}: {exc}") from exc

    def params(self) -> dict[str, Any]:
        """The plan."""
        return {
            "action": self.action,
            "kinds": self.kinds,
            "count": self.count,
            "probability": self.probability,
            "delay_ms": self.delay_ms,
            "hold_s": self.hold_s,
            "seed": self.seed,
            "effect": self.effect,
        }

    def tag(self, cluster: FaultTarget) -> str:
        """The proxy's `--tag`: the project and the fault id."""
        return f"{cluster.project}.{self.fault_id}"

    def record_path(self, cluster: FaultTarget) -> Path:
        """The proxy's record file."""
        return RECORD_DIR / f"{self.tag(cluster)}.jsonl"

    def start(self, cluster: FaultTarget) -> None:
        """Start the proxy in the controller's namespace, redirect the controller's
        connections to the target to it, and close those already open."""
        self.stop(cluster)
        service = proxy_host(cluster)
        if service is None:
            raise UnknownTarget("request: no controller to put the proxy beside")
        tls = cluster.tls_dir()
        if tls is None:
            raise FaultFailed("request: the project's brokers speak plaintext; the proxy needs TLS")
        netns = running_netns(cluster, service)
        target = self.targets[0]
        ip = cluster.ip(target)
        record = self.record_path(cluster)
        RECORD_DIR.mkdir(mode=0o700, exist_ok=True)
        record.unlink(missing_ok=True)
        command = [
            "env", f"PYTHONPATH={ROOT}", sys.executable, "-m", PROXY_MODULE,
            "--upstream", f"{ip}:{BROKER_PORT}", "--server-name", target,
            "--tls-dir", str(tls), "--record", str(record), "--tag", self.tag(cluster),
            *self.plan().as_args(), "--daemon",
        ]  # fmt: skip
        started = json.loads(netns.run(command).stdout)
        rule = redirect_unless_owner(ip, BROKER_PORT, int(started["port"]), os.geteuid())
        netns.add_rules(self.fault_id, [rule])
        netns.kill_connections(ip, BROKER_PORT)

    def records(self, cluster: FaultTarget) -> list[dict[str, Any]]:
        """What the proxy recorded so far, oldest first (lines that do not parse, such as
        one being written, are skipped)."""
        try:
            text = self.record_path(cluster).read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        found = []
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                found.append(record)
        return found

    def took_effect(self, cluster: FaultTarget) -> Check:
        """The proxy runs and has acted on a request (its first record); with
        `effect="armed"` also before that, once its redirect is in place."""
        proxies = self.proxies(cluster)
        records = self.records(cluster)
        self._trace[:] = records
        if not proxies:
            return Check(False, "no proxy running")
        if not records and self.effect == "armed":
            rules = leftovers_everywhere(cluster, self.fault_id)
            if not rules:
                return Check(False, f"proxy {sorted(proxies)} runs but no redirect is in place")
            return Check(
                True, f"armed: proxy {sorted(proxies)}, redirect in {sorted(rules)}; no request yet"
            )
        if not records:
            return Check(False, f"proxy {sorted(proxies)} has acted on no request yet")
        first = records[0]
        return Check(
            True,
            f"{first['step']} {first['kind']} (controller epoch {first['controller_epoch']}, "
            f"{first['partitions']} partitions); {len(records)} records",
        )

    def trace(self) -> list[dict[str, Any]]:
        """The proxy's records as last read (by `took_effect` or `stop`)."""
        return list(self._trace)

    def stop(self, cluster: FaultTarget) -> None:
        """Delete the redirect everywhere, then terminate the fault's proxy."""
        self._trace[:] = self.records(cluster) or self._trace
        self.remove_rules(cluster)
        for pid in self.proxies(cluster):
            terminate(pid)

    def undone(self, cluster: FaultTarget) -> Check:
        """No redirect and no proxy of the fault left."""
        left = leftovers_everywhere(cluster, self.fault_id)
        proxies = self.proxies(cluster)
        if left or proxies:
            return Check(False, f"left: rules {left}, proxies {sorted(proxies)}")
        return Check(True, f"no redirect tagged {self.fault_id} and no proxy left")

    def proxies(self, cluster: FaultTarget) -> dict[int, str]:
        """The host's live proxy processes of this fault: pid -> tag."""
        return tagged(PROXY_MODULE, self.tag(cluster))


def proxy_host(cluster: FaultTarget) -> str | None:
    """The service whose network namespace a request fault's proxy runs in: the
    controller's broker (one ZooKeeper read), or None when no controller is known."""
    controller = cluster.controller_id()
    service = f"broker{controller}"
    return service if controller is not None and service in cluster.services() else None


__all__ = ["EFFECTS", "KINDS", "RequestFault", "proxy_host"]
