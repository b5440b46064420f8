"""The replica audit at the end of a run: after the heal and the convergence watch, every
broker is asked (ClientApi `ReplicaAudit`, with the tools' client identity when the brokers
speak mutual TLS) what its replicas of the run's topic hold per leader epoch; a broker
that does not answer because its container is stopped is read from the log files it left
(`chaos.run.audit_files`), its rows marked `source: "files"`. The answers go into the run
directory as `audit.json` (`rundir.audit`). A broker that can be read neither way is named
there, not an error of the run. Runs on the runner's thread.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from chaos.cluster import endpoints
from chaos.cluster.handle import ClusterHandle
from chaos.run.audit_files import FilesUnread, audit_from_files
from client.audit import audit_brokers
from client.errors import TransportError
from rpc import messages as m
from rpc.wire import ChannelIdentity
from rundir.audit import FROM_FILES, FROM_RPC, AuditedRange, ReplicaReport, audit_document
from rundir.layout import RunDir
from security.tls_files import CLIENT, load_identity

#: Asks every broker of an address map for its replicas of some topics.
AuditBrokers = Callable[
    [Mapping[int, str], tuple[str, ...], ChannelIdentity | None],
    Mapping[int, m.ReplicaAuditResponse | TransportError],
]
#: Reads a broker that did not answer from its files (broker id -> its answer), or raises
#: `FilesUnread`.
AuditFiles = Callable[[int], m.ReplicaAuditResponse]


def reports_of(
    broker: int, answer: m.ReplicaAuditResponse, source: str = FROM_RPC
) -> list[ReplicaReport]:
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
            source,
        )
        for r in answer.replicas
    ]


def write_audit(
    run_dir: RunDir,
    topic: str,
    addresses: Mapping[int, str],
    tls: ChannelIdentity | None,
    audit: AuditBrokers = audit_brokers,
    from_files: AuditFiles | None = None,
    brokers: Iterable[int] = (),
) -> dict[str, Any]:
    """Ask every broker of `addresses`; read those that did not answer, and those of
    `brokers` without an address (a stopped container publishes no port), with
    `from_files` when given. Write `audit.json` and return its content."""
    taken_ms = int(time.time() * 1000)
    answers: dict[int, m.ReplicaAuditResponse | TransportError | None] = dict(
        audit(addresses, (topic,), tls)
    )
    answers.update({b: None for b in brokers if b not in answers})
    reports: list[ReplicaReport] = []
    unreachable: dict[int, str] = {}
    for broker, answer in sorted(answers.items()):
        if isinstance(answer, m.ReplicaAuditResponse):
            reports += reports_of(broker, answer)
            continue
        why = "no published port" if answer is None else str(answer)
        if from_files is None:
            unreachable[broker] = why
            continue
        try:
            reports += reports_of(broker, from_files(broker), FROM_FILES)
        except FilesUnread as exc:
            unreachable[broker] = f"{why}; its files: {exc}"
    document = audit_document(topic, taken_ms, reports, unreachable)
    run_dir.write_json(run_dir.audit, document)
    return document


def audit_cluster(cluster: ClusterHandle, run_dir: RunDir, topic: str) -> str:
    """`write_audit` for the project's brokers on their published ports, a stopped one
    from its container's files; a line for the live view."""
    tls_dir = endpoints.tls_dir(cluster)
    tls = load_identity(tls_dir, CLIENT) if tls_dir is not None else None
    files = functools.partial(audit_from_files, cluster, topic=topic)
    document = write_audit(
        run_dir,
        topic,
        endpoints.broker_addresses(cluster),
        tls,
        from_files=files,
        brokers=cluster.brokers(),
    )
    read = {r["broker"] for r in document["replicas"] if r["source"] == FROM_FILES}
    return (
        f"replica audit: {len(document['replicas'])} replicas "
        f"({len(read)} brokers read from files), "
        f"{len(document['unreachable'])} brokers unreachable, "
        f"{len(document['disagreements'])} disagreements"
    )
