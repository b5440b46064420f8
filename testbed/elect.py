"""`testbed elect-leaders`: ask the controller for preferred or unclean elections, as
Kafka's `kafka-leader-election.sh` does, and report each partition's outcome. Blocks the
calling thread."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from client import Client, controller_address_from_zookeeper
from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors
from security.tls_files import TlsIdentity
from zkdata.client import KafkaZkClient


class ElectionCommandError(Exception):
    """The election could not be asked for; the message is for the user."""


def parse_partitions_file(path: Path) -> tuple[TopicPartition, ...]:
    """Kafka's `--path-to-json-file`: `{"partitions":[{"topic":"t","partition":0}]}`."""
    try:
        data = json.loads(path.read_text())
        return tuple(
            TopicPartition(str(p["topic"]), int(p["partition"])) for p in data["partitions"]
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ElectionCommandError(f"cannot read partitions from {path}: {exc}") from None


def controller_address(zk: KafkaZkClient, override: str | None) -> str:
    """Where the controller listens: `override`, else its registered endpoint."""
    if override:
        return override
    address = controller_address_from_zookeeper(zk)
    if address is None:
        raise ElectionCommandError("no controller is elected")
    return address


def elect(
    address: str,
    election_type: int,
    partitions: Sequence[TopicPartition],
    timeout_ms: int,
    tls: TlsIdentity | None = None,
) -> m.ElectLeadersResponse:
    """Send ElectLeaders to the controller at `address`, over mutual TLS with `tls` (a
    transport failure is retried a few times, then raised as `client.TransportError`)."""
    with Client([address], timeout_s=timeout_ms / 1000 + 5, tls=tls) as client:
        return client.elect_leaders(
            election_type, partitions, timeout_ms=timeout_ms, controller=address
        )


def render(response: m.ElectLeadersResponse, election_name: str) -> tuple[str, bool]:
    """Kafka's report lines, and whether every partition succeeded or needed nothing."""
    if response.error is not Errors.NONE:
        return f"Error: the election failed: {response.error.name}", False
    done = [r for r in response.results if r.error is Errors.NONE]
    not_needed = [r for r in response.results if r.error is Errors.ELECTION_NOT_NEEDED]
    failed = [
        r for r in response.results if r.error not in (Errors.NONE, Errors.ELECTION_NOT_NEEDED)
    ]
    lines = []
    if done:
        lines.append(
            f"Successfully completed leader election ({election_name}) for partitions "
            + ", ".join(str(r.topic_partition) for r in done)
        )
    if not_needed:
        lines.append(
            "Valid replica already elected for partitions "
            + ", ".join(str(r.topic_partition) for r in not_needed)
        )
    if failed:
        lines.append(f"Error completing leader election ({election_name}) for partitions:")
        lines += [f"  {r.topic_partition}: {r.error.name} {r.message}".rstrip() for r in failed]
    if not response.results:
        lines.append("No partition to elect.")
    return "\n".join(lines), not failed
