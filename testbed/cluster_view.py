"""A read-only picture of the cluster: each ZooKeeper server's mode, the registered brokers
with their broker epochs, the controller and the controller epoch. Blocks its caller.
Main thread of the CLI."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from kazoo.client import KazooClient

from domain import TopicPartition
from security.zk_credentials import ZkDigestCredentials, kazoo_options
from security.zk_tls import ZkTls
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.errors import ZnodeFormatError
from zkdata.fourletter import server_mode
from zkdata.model import Broker


@dataclass(frozen=True)
class ClusterView:
    """What `testbed cluster` shows."""

    servers: dict[str, str]
    brokers: dict[int, Broker]
    controller_id: int | None
    controller_epoch: int | None
    problems: list[str] = field(default_factory=list)
    partitions: int = 0
    offline: list[str] = field(default_factory=list)


def read_cluster(
    connect: str,
    timeout_s: float = 10.0,
    credentials: ZkDigestCredentials | None = None,
    tls: ZkTls | None = None,
) -> ClusterView:
    """Query every server with `srvr` and read the cluster znodes through one session
    (both over TLS with `tls`).

    Raises `kazoo.handlers.threading.KazooTimeoutError` if no server can be reached.
    """
    hosts, _ = paths.split_chroot(connect)
    servers = {}
    context = tls.ssl_context() if tls is not None else None
    for hostport in hosts.split(","):
        host, _, port = hostport.rpartition(":")
        servers[hostport] = server_mode(host, int(port), tls=context)
    client = KazooClient(
        hosts=connect, timeout=timeout_s, read_only=True, **kazoo_options(credentials, tls)
    )
    client.start(timeout=timeout_s)
    try:
        zk = KafkaZkClient(client)
        problems: list[str] = []
        brokers: dict[int, Broker] = {}
        if client.exists(paths.BROKER_IDS):
            listing = zk.get_all_brokers()
            brokers = listing.brokers
            problems += [str(err) for err in listing.malformed.values()]
        controller_id = epoch = None
        try:
            controller_id = zk.get_controller_id()
        except ZnodeFormatError as exc:
            problems.append(str(exc))
        try:
            found = zk.get_controller_epoch()
            epoch = found.epoch if found else None
        except ZnodeFormatError as exc:
            problems.append(str(exc))
        partitions, offline = _offline_partitions(zk, set(brokers), problems)
        return ClusterView(servers, brokers, controller_id, epoch, problems, partitions, offline)
    finally:
        client.stop()
        client.close()


def _offline_partitions(
    zk: KafkaZkClient, live: set[int], problems: list[str]
) -> tuple[int, list[str]]:
    """Every partition (read pipelined) and those without a live leader."""
    topics = zk.get_all_topics()
    reads = zk.get_topic_assignments(sorted(topics))
    problems += [str(err) for err in reads.malformed.values()]
    tps = [
        TopicPartition(topic, p)
        for topic, assignment in reads.found.items()
        for p in sorted(assignment.partitions)
    ]
    states = zk.get_partition_states(tps)
    offline = [
        str(tp)
        for tp in sorted(tps)
        if (s := states.found.get(tp)) is None or s.leader_and_isr.leader not in live
    ]
    return len(tps), offline


def render(view: ClusterView) -> str:
    """A plain-text table."""
    lines = ["ZooKeeper ensemble", f"  {'SERVER':<24}MODE"]
    lines += [f"  {server:<24}{mode}" for server, mode in view.servers.items()]
    lines += ["", "Brokers", f"  {'ID':<5}{'ENDPOINT':<34}{'BROKER EPOCH (czxid)':<22}REGISTERED"]
    if not view.brokers:
        lines.append("  (none registered)")
    for broker_id in sorted(view.brokers):
        b = view.brokers[broker_id]
        registered = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(b.info.timestamp_ms / 1000))
        lines.append(
            f"  {broker_id:<5}{b.info.endpoint.connection_string():<34}{b.epoch:<22}{registered}Z"
        )
    lines += ["", "Controller"]
    if view.controller_id is None:
        lines.append("  (none)")
    else:
        lines.append(f"  broker {view.controller_id}, controller epoch {view.controller_epoch}")
    lines += ["", f"Partitions: {view.partitions}, offline: {len(view.offline)}"]
    if view.offline:
        shown = ", ".join(view.offline[:20]) + (" ..." if len(view.offline) > 20 else "")
        lines.append(f"  offline: {shown}")
    if view.problems:
        lines += ["", "Problems"] + [f"  {p}" for p in view.problems]
    return "\n".join(lines)
