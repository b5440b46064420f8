"""Packet-filter rules of the network faults, as values (pure; no I/O).

Every rule the chaos engine adds lives in one of its own chains and carries the iptables
comment `testbed-chaos:<fault id>`:

| hook | table | our chain | jumped to from |
| --- | --- | --- | --- |
| `IN` | filter | `TESTBED-CHAOS-IN` | `INPUT` |
| `OUT` | filter | `TESTBED-CHAOS-OUT` | `OUTPUT` |
| `NAT_OUT` | nat | `TESTBED-CHAOS-NAT` | `OUTPUT` |

so undoing a fault deletes exactly the rules whose comment names it, whatever other faults
or Docker put into the same network namespace, and proving the undo is a search for the
comment in `iptables -S`. This module builds the argument vectors and parses the listings;
`chaos.faults.netns` runs them inside a container's network namespace.

Thread-safety: values only; any thread.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass
from enum import Enum

TAG_PREFIX = "testbed-chaos:"
_FAULT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,100}$")


class Hook(Enum):
    """Where a rule applies: (table, built-in chain it hangs off, our chain)."""

    IN = ("filter", "INPUT", "TESTBED-CHAOS-IN")
    OUT = ("filter", "OUTPUT", "TESTBED-CHAOS-OUT")
    NAT_OUT = ("nat", "OUTPUT", "TESTBED-CHAOS-NAT")

    @property
    def table(self) -> str:
        """The iptables table."""
        return self.value[0]

    @property
    def builtin(self) -> str:
        """The built-in chain that jumps to ours."""
        return self.value[1]

    @property
    def chain(self) -> str:
        """Our chain."""
        return self.value[2]


def tag(fault_id: str) -> str:
    """The iptables comment that marks a fault's rules; refuses ids iptables would mangle."""
    if not _FAULT_ID.match(fault_id):
        raise ValueError(f"fault id {fault_id!r} must match {_FAULT_ID.pattern}")
    return TAG_PREFIX + fault_id


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: its hook and its match and target arguments (without the comment),
    e.g. `Rule(Hook.IN, ("-s", "10.0.0.5/32", "-j", "DROP"))`."""

    hook: Hook
    spec: tuple[str, ...]

    def argv(self, action: str, fault_id: str) -> tuple[str, ...]:
        """`iptables` arguments that apply `action` (`-A`, `-C`, `-D`) to this rule,
        tagged with the fault's comment."""
        comment = ("-m", "comment", "--comment", tag(fault_id))
        return ("-w", "-t", self.hook.table, action, self.hook.chain, *self.spec, *comment)


def drop_from(ip: str) -> Rule:
    """Drop every packet arriving from `ip`."""
    return Rule(Hook.IN, ("-s", f"{ip}/32", "-j", "DROP"))


#: The shortest TCP segment that carries data from a ZooKeeper server: 20 bytes of IP, 32
#: of TCP with timestamps, 16 of the smallest reply (a ping's). Pure ACKs (52 bytes, 64
#: with a SACK block) and handshakes (60) are shorter.
ZK_DATA_MIN_LENGTH = 68


def drop_data_from(ip: str) -> Rule:
    """Drop every TCP segment long enough to carry a ZooKeeper reply arriving from `ip`;
    its ACKs and handshakes pass, so what is sent to `ip` keeps flowing."""
    return Rule(
        Hook.IN,
        ("-s", f"{ip}/32", "-p", "tcp", "-m", "length", "--length",
         f"{ZK_DATA_MIN_LENGTH}:65535", "-j", "DROP"),
    )  # fmt: skip


def drop_replies_to(ip: str, port: int, local_port: int) -> Rule:
    """Drop what `ip:port` sends to one connection, the local socket on `local_port`; a
    new connection from another local port passes."""
    return Rule(
        Hook.IN,
        ("-s", f"{ip}/32", "-p", "tcp", "--sport", str(port), "--dport", str(local_port),
         "-j", "DROP"),
    )  # fmt: skip


def count_arrivals() -> Rule:
    """Count (and let through) every packet that arrives from another host."""
    return Rule(Hook.IN, ("!", "-i", "lo"))


def drop_randomly(probability: float) -> Rule:
    """Drop each packet that arrives from another host with `probability`."""
    if not 0.0 < probability <= 1.0:
        raise ValueError(f"drop probability must be in (0, 1], got {probability}")
    return Rule(
        Hook.IN,
        ("!", "-i", "lo", "-m", "statistic", "--mode", "random", "--probability",
         f"{probability:.4f}", "-j", "DROP"),
    )  # fmt: skip


def redirect(ip: str, port: int, to_port: int, unless_mark: int) -> Rule:
    """Send locally opened TCP connections to `ip:port` to the local `to_port` instead,
    except those of sockets marked `unless_mark` (the proxy's own upstream sockets)."""
    return _redirect(ip, port, to_port, ("-m", "mark", "!", "--mark", hex(unless_mark)))


def redirect_unless_owner(ip: str, port: int, to_port: int, owner_uid: int) -> Rule:
    """Send locally opened TCP connections to `ip:port` to the local `to_port` instead,
    except those of processes running as `owner_uid` (a proxy that cannot mark its
    sockets: gRPC's own)."""
    return _redirect(ip, port, to_port, ("-m", "owner", "!", "--uid-owner", str(owner_uid)))


def _redirect(ip: str, port: int, to_port: int, exempt: tuple[str, ...]) -> Rule:
    return Rule(
        Hook.NAT_OUT,
        ("-p", "tcp", "-d", f"{ip}/32", "--dport", str(port), *exempt,
         "-j", "REDIRECT", "--to-ports", str(to_port)),
    )  # fmt: skip


def chain_setup(hook: Hook) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """`iptables` arguments to (list our chain, create it, jump to it from the built-in
    chain); the jump is checked with `-C` before it is inserted."""
    return (
        ("-w", "-t", hook.table, "-S", hook.chain),
        ("-w", "-t", hook.table, "-N", hook.chain),
        ("-w", "-t", hook.table, "-I", hook.builtin, "-j", hook.chain),
    )


def chain_teardown(hook: Hook) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """`iptables` arguments to remove the jump to our chain and then the (empty) chain."""
    return (
        ("-w", "-t", hook.table, "-D", hook.builtin, "-j", hook.chain),
        ("-w", "-t", hook.table, "-X", hook.chain),
    )


def tagged_lines(listing: str, fault_id: str | None = None) -> list[str]:
    """The `-A` lines of an `iptables -S` listing that carry our comment (of one fault,
    or of any fault when `fault_id` is None)."""
    wanted = tag(fault_id) if fault_id is not None else TAG_PREFIX
    found = []
    for line in listing.splitlines():
        if not line.startswith("-A "):
            continue
        words = shlex.split(line)
        comments = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--comment"]
        if any(c == wanted or (fault_id is None and c.startswith(wanted)) for c in comments):
            found.append(line)
    return found


def delete_argv(table: str, line: str) -> tuple[str, ...]:
    """`iptables` arguments that delete the rule an `iptables -S` line shows."""
    words = shlex.split(line)
    if not words or words[0] != "-A":
        raise ValueError(f"not a rule line: {line!r}")
    return ("-w", "-t", table, "-D", *words[1:])


def chain_rules(listing: str, chain: str) -> list[str]:
    """The `-A <chain>` lines of an `iptables -S` listing."""
    return [line for line in listing.splitlines() if line.startswith(f"-A {chain} ")]


def packet_counts(listing: str, fault_id: str) -> list[int]:
    """The packet counters of a fault's rules, in order, from an `iptables -S -v` listing
    (which shows `-c <packets> <bytes>` on every rule)."""
    counts = []
    for line in tagged_lines(listing, fault_id):
        words = shlex.split(line)
        if "-c" not in words:
            raise ValueError(f"listing has no counters (use -v): {line!r}")
        counts.append(int(words[words.index("-c") + 1]))
    return counts


def fault_id(kind: str, description: str) -> str:
    """A stable id for a fault from its kind and canonical JSON description, so a fault
    rebuilt from `faults.jsonl` or the heal state names the same rules."""
    digest = hashlib.sha256(f"{kind}\n{description}".encode()).hexdigest()[:12]
    return tag(f"{kind}-{digest}").removeprefix(TAG_PREFIX)
