"""Commands run from the host inside a container's network namespace.

`Netns(pid)` runs `nsenter -t <pid> -n <command>`: the host's iptables, tc, ss and python
act on the container's interfaces and packet filter, and nothing has to be installed in
the images. On top of it: adding a fault's tagged rules (idempotent), deleting exactly
them (then our chains once empty), listing what is left, and the one root qdisc a fault
may own (handle `7e57:`, so undo never removes a qdisc that is not ours).

A container that is not running has no network namespace to clean: `netns_of` answers
None for it, and a restarted container has a fresh namespace without our rules, so undo
over the services' current pids is always clean.

Errors: a failed command raises `chaos.errors.FaultFailed` with its output.

Thread-safety: runs on the caller's thread (the injector's); no shared state.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from chaos.errors import FaultFailed
from chaos.faults.base import FaultTarget
from chaos.faults.process import UP
from chaos.faults.rules import (
    Hook,
    Rule,
    chain_rules,
    chain_setup,
    chain_teardown,
    delete_argv,
    tagged_lines,
)

QDISC_HANDLE = "7e57:"
DEVICE = "eth0"
TABLES = ("filter", "nat")
COMMAND_TIMEOUT_S = 20.0


@dataclass(frozen=True, slots=True)
class Netns:
    """The network namespace of the process `pid` (a container's main process)."""

    pid: int

    def argv(self, command: Sequence[str]) -> list[str]:
        """`command` wrapped to run inside this namespace."""
        return ["nsenter", "-t", str(self.pid), "-n", *command]

    def run(
        self, command: Sequence[str], check: bool = True, timeout: float = COMMAND_TIMEOUT_S
    ) -> subprocess.CompletedProcess[str]:
        """Run `command` in the namespace; `FaultFailed` when `check` and it fails."""
        argv = self.argv(command)
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise FaultFailed(f"`{' '.join(argv)}`: {exc}") from exc
        if check and done.returncode != 0:
            raise FaultFailed(
                f"`{' '.join(argv)}` exited with {done.returncode}: "
                f"{(done.stderr or done.stdout).strip()}"
            )
        return done

    def iptables(self, args: Sequence[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run the host's `iptables` in the namespace."""
        return self.run(["iptables", *args], check=check)

    def listing(self, table: str, verbose: bool = False) -> str:
        """`iptables -S` of one table (with packet counters when `verbose`)."""
        return self.iptables(["-w", "-t", table, "-S", *(["-v"] if verbose else [])]).stdout

    def add_rules(self, fault_id: str, rules: Iterable[Rule]) -> None:
        """Add the fault's rules in order, each only if it is not there yet."""
        for rule in rules:
            self._ensure_chain(rule.hook)
            if self.iptables(rule.argv("-C", fault_id), check=False).returncode != 0:
                self.iptables(rule.argv("-A", fault_id))

    def remove_rules(self, fault_id: str) -> int:
        """Delete every rule tagged with the fault's comment, then our chains that are left
        empty; answers how many rules were deleted."""
        removed = 0
        for table in TABLES:
            for line in tagged_lines(self.listing(table), fault_id):
                if self.iptables(delete_argv(table, line), check=False).returncode == 0:
                    removed += 1
        for hook in Hook:
            self._drop_chain_if_empty(hook)
        return removed

    def leftovers(self, fault_id: str | None = None) -> list[str]:
        """Rules of the fault (or of any fault) still present, as `iptables -S` lines."""
        return [line for table in TABLES for line in tagged_lines(self.listing(table), fault_id)]

    def root_qdisc(self) -> dict[str, Any] | None:
        """The root qdisc of eth0 with its statistics, when it is ours; else None."""
        shown = self.run(["tc", "-s", "-j", "qdisc", "show", "dev", DEVICE]).stdout
        for qdisc in json.loads(shown or "[]"):
            if qdisc.get("root") and qdisc.get("handle") == QDISC_HANDLE:
                return dict(qdisc)
        return None

    def set_root_qdisc(self, qdisc: Sequence[str]) -> None:
        """Install (or replace) our root qdisc on eth0, e.g. `("tbf", "rate", "256kbit",
        ...)`."""
        self.run(["tc", "qdisc", "replace", "dev", DEVICE, "root", "handle", QDISC_HANDLE,
                  *qdisc])  # fmt: skip

    def remove_root_qdisc(self) -> bool:
        """Delete our root qdisc if it is there (the kernel default comes back)."""
        if self.root_qdisc() is None:
            return False
        self.run(["tc", "qdisc", "del", "dev", DEVICE, "root", "handle", QDISC_HANDLE])
        return True

    def kill_connections(self, ip: str, port: int, local_port: int | None = None) -> None:
        """Close the namespace's TCP connections to `ip:port` (`ss -K`), or only the one
        from `local_port`, so that the client reconnects through rules that only see new
        connections."""
        only = ["sport", "=", str(local_port)] if local_port is not None else []
        self.run(["ss", "-K", "-t", "dst", ip, "dport", "=", str(port), *only])

    def established(self, port: int) -> str:
        """`ss -H -t -i -n` of the established connections to remote `port`, with the
        kernel's details of each socket (`chaos.faults.tcp_watch.parse_ss` reads it)."""
        return self.run(["ss", "-H", "-t", "-i", "-n", "state", "established",
                         f"( dport = :{port} )"]).stdout  # fmt: skip

    def _ensure_chain(self, hook: Hook) -> None:
        show, create, jump = chain_setup(hook)
        if self.iptables(show, check=False).returncode != 0:
            self.iptables(create)
        check_jump = ("-w", "-t", hook.table, "-C", hook.builtin, "-j", hook.chain)
        if self.iptables(check_jump, check=False).returncode != 0:
            self.iptables(jump)

    def _drop_chain_if_empty(self, hook: Hook) -> None:
        show = self.iptables(chain_setup(hook)[0], check=False)
        if show.returncode != 0 or chain_rules(show.stdout, hook.chain):
            return
        unjump, delete = chain_teardown(hook)
        while self.iptables(unjump, check=False).returncode == 0:
            pass
        self.iptables(delete, check=False)


def netns_of(cluster: FaultTarget, service: str) -> Netns | None:
    """The service's network namespace, or None when its container is not running."""
    if cluster.status(service) not in UP:
        return None
    try:
        pid = cluster.pid(service)
    except FaultFailed:  # the container stopped between the two reads (a kill of it)
        return None
    return Netns(pid) if pid > 0 else None


def remove_everywhere(cluster: FaultTarget, fault_id: str) -> None:
    """Delete the fault's rules and qdisc-free chains from every service of the project
    (a fault's rules may sit on services other than its targets)."""
    for service in cluster.services():
        netns = netns_of(cluster, service)
        if netns is None:
            continue
        try:
            netns.remove_rules(fault_id)
        except FaultFailed:
            if netns_of(cluster, service) == netns:
                raise  # same namespace, still there: a real failure
            # the container stopped or restarted meanwhile: its namespace went with it


def leftovers_everywhere(cluster: FaultTarget, fault_id: str) -> dict[str, list[str]]:
    """The fault's rules still present, by service (services without any left out)."""
    found = {}
    for service in cluster.services():
        netns = netns_of(cluster, service)
        lines = netns.leftovers(fault_id) if netns is not None else []
        if lines:
            found[service] = lines
    return found
