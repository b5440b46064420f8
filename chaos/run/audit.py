"""The replica audit at the end of a run: after the heal and the convergence watch, every
broker is asked (ClientApi `ReplicaAudit`, with the tools' client identity when the brokers
speak mutual TLS) what its replicas of the run's topic hold per leader epoch, and the
answers go into the run directory as `audit.json` (`rundir.audit`). A broker that does not
answer is named there, not an error of the run. Runs on the runner's thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from chaos.cluster import endpoints
from chaos.cluster.handle import ClusterHandle
from client.audit import audit_brokers
from client.errors import TransportError
from rpc import messages as m
from rpc.wire import ChannelIdentity
from rundir.audit import AuditedRange, ReplicaReport, audit_document
from rundir.layout import RunDir
from security.tls_files import CLIENT, load_identity

#: Asks every broker of an address map for its replicas of some topics.
AuditBrokers = Callable[
    [Mapping[int, str], tuple[str, ...], ChannelIdentity | None],
    Mapping[int, m.ReplicaAuditResponse | TransportError],
]


def reports_of(broker: int, answer: m.ReplicaAuditResponse) -> list[ReplicaReport]:
    """One broker's answer as `audit.json` rows."""
    return [
        ReplicaReport(
            broker,
            r.topic,
            r.partition,
            r.leader,
            r.leader_epoch,
            r.log_start_offset,
            r.log_end_offset,
            r.high_watermark,
            tuple(
                AuditedRange(e.leader_epoch, e.start_offset, e.end_offset, e.digest)
                for e in r.epochs
            ),
            r.error_message,
        )
        for r in answer.replicas
    ]


def write_audit(
    run_dir: RunDir,
    topic: str,
    addresses: Mapping[int, str],
    tls: ChannelIdentity | None,
    audit: AuditBrokers = audit_brokers,
) -> dict[str, Any]:
    """Ask every broker, write `audit.json` and return its content."""
    taken_ms = int(time.time() * 1000)
    answers = audit(addresses, (topic,), tls)
    reports: list[ReplicaReport] = []
    unreachable: dict[int, str] = {}
    for broker, answer in sorted(answers.items()):
        if isinstance(answer, TransportError):
            unreachable[broker] = str(answer)
        else:
            reports += reports_of(broker, answer)
    document = audit_document(topic, taken_ms, reports, unreachable)
    run_dir.write_json(run_dir.audit, document)
    return document


def audit_cluster(cluster: ClusterHandle, run_dir: RunDir, topic: str) -> str:
    """`write_audit` for the project's brokers on their published ports; a line for the
    live view."""
    tls_dir = endpoints.tls_dir(cluster)
    tls = load_identity(tls_dir, CLIENT) if tls_dir is not None else None
    document = write_audit(run_dir, topic, endpoints.broker_addresses(cluster), tls)
    return (
        f"replica audit: {len(document['replicas'])} replicas, "
        f"{len(document['unreachable'])} brokers unreachable, "
        f"{len(document['disagreements'])} disagreements"
    )
