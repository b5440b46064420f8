"""The broker's Prometheus endpoint, with Kafka's metric names.

A custom collector reads, on each scrape (on the HTTP server's thread), the controller's
published figures, its event manager, its channel manager's queues, the replicas this
broker hosts and its incremental fetch sessions. Nothing is registered globally: each
broker owns its registry.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import make_wsgi_app
from prometheus_client.core import (
    CollectorRegistry,
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    SummaryMetricFamily,
)
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from broker_node.broker_state import BrokerStateTracker
    from broker_node.replica_manager import ReplicaManager
    from controller import KafkaController

CONTROLLER = "kafka_controller_KafkaController_"
STATS = "kafka_controller_ControllerStats_"
EVENT_MANAGER = "kafka_controller_ControllerEventManager_"
CHANNEL = "kafka_controller_ControllerChannelManager_"
REPLICA_MANAGER = "kafka_server_ReplicaManager_"
FETCH_SESSIONS = "kafka_server_FetchSessionCache_"
SERVER = "kafka_server_KafkaServer_"
LOG_MANAGER = "kafka_log_LogManager_"


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


class BrokerCollector(Collector):
    """Collects one broker's metrics at scrape time."""

    def __init__(
        self,
        controller: KafkaController,
        replicas: ReplicaManager,
        broker_state: BrokerStateTracker | None = None,
    ) -> None:
        self._controller = controller
        self._replicas = replicas
        self._broker_state = broker_state

    def collect(self) -> Iterator[Metric]:
        """Yield every metric family."""
        c = self._controller
        snap = c.metrics.snapshot()
        if self._broker_state is not None:
            yield _gauge(
                SERVER + "BrokerState",
                "where the broker is in its life (Kafka's BrokerState values)",
                int(self._broker_state.reported(c.is_active)),
            )
        yield _gauge(
            CONTROLLER + "ActiveControllerCount",
            "1 on the active controller",
            snap.active_controller_count,
        )
        yield _gauge(
            CONTROLLER + "OfflinePartitionsCount",
            "partitions without a live leader",
            snap.offline_partitions_count,
        )
        yield _gauge(
            CONTROLLER + "PreferredReplicaImbalanceCount",
            "partitions not led by their preferred replica",
            snap.preferred_replica_imbalance_count,
        )
        yield _gauge(CONTROLLER + "GlobalTopicCount", "topics", snap.global_topic_count)
        yield _gauge(CONTROLLER + "GlobalPartitionCount", "partitions", snap.global_partition_count)
        for name, doc, value in (
            ("TopicsToDeleteCount", "topics queued for deletion", snap.topics_to_delete_count),
            (
                "ReplicasToDeleteCount",
                "replicas of those topics not yet deleted",
                snap.replicas_to_delete_count,
            ),
            (
                "TopicsIneligibleToDeleteCount",
                "queued topics whose deletion is halted",
                snap.topics_ineligible_to_delete_count,
            ),
            (
                "ReplicasIneligibleToDeleteCount",
                "replicas of queued topics in ReplicaDeletionIneligible",
                snap.replicas_ineligible_to_delete_count,
            ),
        ):
            yield _gauge(CONTROLLER + name, doc, value)
        yield _gauge(
            CONTROLLER + "ControllerState",
            "what the controller event thread is doing (Kafka's ControllerState values)",
            int(c.event_manager.state),
        )
        yield _gauge(
            EVENT_MANAGER + "EventQueueSize",
            "queued controller events",
            c.event_manager.queue_size(),
        )
        queue_time = snap.event_queue_time
        yield SummaryMetricFamily(
            EVENT_MANAGER + "EventQueueTimeMs",
            "time events waited in the queue (ms)",
            count_value=queue_time.count,
            sum_value=queue_time.total_ms,
        )
        election = snap.leader_election
        yield SummaryMetricFamily(
            STATS + "LeaderElectionRateAndTimeMs",
            "BrokerChange events and their time (ms), as Kafka times them",
            count_value=election.count,
            sum_value=election.total_ms,
        )
        unclean = CounterMetricFamily(
            STATS + "UncleanLeaderElectionsPerSec", "leaders elected from outside the ISR"
        )
        unclean.add_metric([], snap.unclean_leader_elections)
        yield unclean
        queues = GaugeMetricFamily(
            CHANNEL + "QueueSize", "control requests waiting per broker", labels=["broker_id"]
        )
        active = c.active
        if active is not None:
            for broker_id, size in sorted(active.channels.queue_sizes().items()):
                queues.add_metric([str(broker_id)], size)
        yield queues
        partitions = self._replicas.partitions()
        leaders = [p for p in partitions if p.is_leader]
        yield _gauge(REPLICA_MANAGER + "LeaderCount", "partitions this broker leads", len(leaders))
        yield _gauge(
            REPLICA_MANAGER + "PartitionCount", "partitions this broker hosts", len(partitions)
        )
        yield _gauge(
            REPLICA_MANAGER + "UnderReplicatedPartitions",
            "led partitions whose ISR is smaller than their replica set",
            sum(1 for p in leaders if p.under_replicated()),
        )
        yield _gauge(
            LOG_MANAGER + "OfflineLogDirectoryCount",
            "log directories taken offline by an I/O error (KIP-112)",
            int(self._replicas.log_dir_failures.offline),
        )
        sessions = self._replicas.fetch_sessions.figures()
        yield _gauge(
            FETCH_SESSIONS + "NumIncrementalFetchSessions",
            "incremental fetch sessions open on this broker (KIP-227)",
            sessions.sessions,
        )
        yield _gauge(
            FETCH_SESSIONS + "NumIncrementalFetchPartitionsCached",
            "partitions held by those sessions",
            sessions.partitions,
        )
        evictions = CounterMetricFamily(
            FETCH_SESSIONS + "IncrementalFetchSessionEvictionsPerSec",
            "sessions closed to make room for new ones",
        )
        evictions.add_metric([], sessions.evictions)
        yield evictions


#: How often the endpoint's thread looks for a stop request between requests: a stopping
#: broker waits up to this long for it (the standard library's default is 0.5 s).
POLL_INTERVAL_S = 0.05


class _Server(ThreadingMixIn, WSGIServer):
    """One thread per scrape; the threads do not keep the process alive."""

    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    """No access log line per scrape."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve_metrics(
    host: str,
    port: int,
    controller: KafkaController,
    replicas: ReplicaManager,
    broker_state: BrokerStateTracker | None = None,
) -> tuple[WSGIServer, int]:
    """Start the HTTP endpoint (its own daemon thread); returns the server and its port.
    `shutdown()` stops it within `POLL_INTERVAL_S`."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(BrokerCollector(controller, replicas, broker_state))

    class Server(_Server):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

    server = make_server(host, port, make_wsgi_app(registry), Server, handler_class=_Quiet)
    threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": POLL_INTERVAL_S},
        name="metrics-http",
        daemon=True,
    ).start()
    return server, int(server.server_port)
