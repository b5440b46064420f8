"""Rotating the cluster's CA: the three phases, the trust bundles and the order of the
rolling restarts, as values. `security.rotation_files` writes each phase's files and
`security.rolling` restarts the servers one by one. Pure; any thread.

A TLS peer checks the other side's certificate against its trust store when a connection
opens, and every server both accepts connections and opens them (ZooKeeper's quorum, the
brokers' channels to each other and to ZooKeeper). A server restarted with a certificate
of the new CA is therefore refused by every peer that trusts only the old one, so a
rotation that keeps the cluster serving takes three passes over the servers:

| phase | trust (`ca.crt`) | certificates | safe because |
| --- | --- | --- | --- |
| `trust-both` | old CA, new CA | old | every trust store holds the old CA |
| `new-leaves` | old CA, new CA | new | after pass 1 every server trusts both |
| `retire-old` | new CA | new | after pass 2 nobody presents an old one |

Each pass restarts every ZooKeeper server, the ensemble's leader last, then every broker,
the controller last: one election per pass on each side instead of one per restart.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "PHASES",
    "Phase",
    "RollingStep",
    "pem_certificates",
    "phases_left",
    "rolling_order",
    "rolling_steps",
    "trust_bundle",
]


class Phase(enum.Enum):
    """One pass of a rotation: which files are in place when its restarts run."""

    TRUST_BOTH = "trust-both"
    NEW_LEAVES = "new-leaves"
    RETIRE_OLD = "retire-old"


#: The passes in the order a rotation makes them.
PHASES: tuple[Phase, ...] = (Phase.TRUST_BOTH, Phase.NEW_LEAVES, Phase.RETIRE_OLD)

_PEM_CERTIFICATE = re.compile(
    rb"-----BEGIN CERTIFICATE-----\r?\n.+?-----END CERTIFICATE-----", re.DOTALL
)


def pem_certificates(pem: bytes) -> tuple[bytes, ...]:
    """The certificates of a PEM file in order, each from its BEGIN line to its END line
    (anything between them, such as a key or a comment, is left out)."""
    return tuple(match.group(0) for match in _PEM_CERTIFICATE.finditer(pem))


def trust_bundle(*pems: bytes) -> bytes:
    """One PEM trust store holding every certificate of `pems`, in order, each once."""
    seen: list[bytes] = []
    for pem in pems:
        seen.extend(c for c in pem_certificates(pem) if c not in seen)
    if not seen:
        raise ValueError("a trust bundle needs at least one certificate")
    return b"".join(c + b"\n" for c in seen)


def phases_left(done: Phase | None) -> tuple[Phase, ...]:
    """The passes a rotation still makes when the files of `done` are in place (None: no
    rotation under way). The pass of `done` is made again: how many of its restarts had
    happened when the rotation stopped is not known, and a restart more does no harm."""
    return PHASES if done is None else PHASES[PHASES.index(done) :]


def _number(service: str) -> tuple[int, str]:
    digits = "".join(ch for ch in service if ch.isascii() and ch.isdigit())
    return (int(digits) if digits else 0, service)


def rolling_order(services: Sequence[str], last: str | None) -> tuple[str, ...]:
    """`services` by their number (`zk2` before `zk10`), `last` (the ZooKeeper leader or
    the controller, when known) moved to the end."""
    ordered = sorted(set(services), key=_number)
    if last in ordered:
        ordered.remove(last)
        ordered.append(last)
    return tuple(ordered)


@dataclass(frozen=True, slots=True)
class RollingStep:
    """Restart `service` with the files of `phase` in place."""

    phase: Phase
    service: str

    def describe(self) -> str:
        """`trust-both: restart zk2`."""
        return f"{self.phase.value}: restart {self.service}"


def rolling_steps(
    phase: Phase,
    zookeepers: Sequence[str],
    brokers: Sequence[str],
    zk_leader: str | None = None,
    controller: str | None = None,
) -> tuple[RollingStep, ...]:
    """One pass: every ZooKeeper server (the leader last), then every broker (the
    controller last)."""
    order = (*rolling_order(zookeepers, zk_leader), *rolling_order(brokers, controller))
    return tuple(RollingStep(phase, service) for service in order)
