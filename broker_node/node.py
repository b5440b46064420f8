"""`BrokerNode`: one broker process, assembled and run.

Start-up order: event log -> TLS material and the handshake tap (when configured) ->
ZooKeeper session -> persistent paths -> gRPC server (the port is known before registering)
-> registration (broker epoch) -> controller (election). With a TLS directory every gRPC
server and channel of the broker speaks mutual TLS with the broker certificate; refused
handshakes and refused calls become `tls_handshake_refused` and `unauthorized_request`.
Stopping reverses it and closes the session, so `/brokers/ids/N` (and `/controller`, if
held) disappear at once. `start`/`stop` run on the main thread and move the broker's
state (`broker_node.broker_state`): Starting, RunningAsBroker once registered and
electing, PendingControlledShutdown while the controller moves its leaderships,
BrokerShuttingDown, NotRunning.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Collection
from dataclasses import asdict
from typing import Any

from broker_node.alter_isr_manager import AlterIsrManager, started_alter_isr
from broker_node.broker_state import BrokerState, BrokerStateTracker
from broker_node.client_api import ClientApi
from broker_node.config import BrokerConfig
from broker_node.config_changes import ConfigChangeListener
from broker_node.control_requests import ControlRequestHandler
from broker_node.controlled_shutdown import ask_controller, ask_until_done
from broker_node.log_dir_failure import LogDirFailureHandler
from broker_node.metadata_cache import MetadataSnapshot
from broker_node.metrics import serve_metrics
from broker_node.registration import BrokerRegistration
from broker_node.replica_manager import ReplicaManager
from broker_node.replication_config import replication_config
from broker_node.request_guard import GuardedBrokerControl, GuardedClientApi, RequestGuard
from broker_node.zk_session import SessionListener, ensure_chroot, new_client
from controller import KafkaController, collector
from controller.channel_manager import grpc_channel
from controller.config import ControllerConfig
from eventlog import (
    BugSwitchesOn,
    ControlledShutdownAttempt,
    EventLog,
    NodeStarted,
    NodeStopped,
    TlsHandshakeRefused,
    UnauthorizedRequest,
)
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import (
    AccessPolicy,
    HandshakeFailure,
    Refusal,
    RpcServer,
    StderrTap,
)
from security.tls_files import BROKER, TlsIdentity, broker_identity
from zkdata.client import KafkaZkClient
from zkdata.config_changes import ConfigChangesZk
from zkdata.fenced_writes import observe_commits
from zkdata.state_readers import ReaderSettings

log = logging.getLogger(__name__)


#: gRPC worker threads (Fetch long polls hold one each; an acks=all Produce waits for its
#: followers in the produce purgatory and holds none).
GRPC_WORKERS = 64


class BrokerNode:
    """A broker: registration, control-plane service, controller."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.events = EventLog(config.run_dir, config.node_name)
        self._kazoo = new_client(
            config.zk_connect, config.zk_session_timeout_ms, config.zk_credentials, config.zk_tls
        )
        self.zk = KafkaZkClient(self._kazoo)
        self._server: RpcServer | None = None
        self.port = config.port
        self.registration: BrokerRegistration | None = None
        self.controller: KafkaController | None = None
        self.handler: ControlRequestHandler | None = None
        self.replicas: ReplicaManager | None = None
        self.alter_isr: AlterIsrManager | None = None
        self._log_dir_failures: LogDirFailureHandler | None = None
        self._stopping = threading.Event()
        self._metrics_server: Any = None
        self._config_changes: ConfigChangeListener | None = None
        self.metrics_port: int | None = None
        self._tls: TlsIdentity | None = None
        self._tap: StderrTap | None = None
        self.state = BrokerStateTracker()

    @property
    def broker_epoch(self) -> int:
        """The current broker epoch (-1 before registration)."""
        return self.registration.epoch if self.registration else -1

    def _metadata(self) -> MetadataSnapshot | None:
        return self.handler.metadata_cache.snapshot() if self.handler else None

    def start(self) -> None:
        """Bring the broker up; raises if ZooKeeper or the port is unavailable."""
        cfg = self.config
        self.state.become(BrokerState.STARTING)
        self.events.emit(NodeStarted(broker_id=cfg.broker_id, zk_connect=cfg.zk_connect))
        if cfg.bug_switches:
            self.events.emit(BugSwitchesOn(switches=sorted(cfg.bug_switches.names)))
        if cfg.tls_dir is not None:
            self._tls = broker_identity(cfg.tls_dir, cfg.broker_id)
            self._tap = StderrTap(self._on_handshake_refused)
            self._tap.start()
        timeout_s = cfg.zk_connection_timeout_ms / 1000
        ensure_chroot(cfg.zk_connect, timeout_s, cfg.zk_credentials, cfg.zk_tls)
        self._kazoo.start(timeout=timeout_s)
        self.zk.create_persistent_paths()
        self.alter_isr = started_alter_isr(
            cfg, lambda: self.broker_epoch, self._metadata, self._tls
        )
        self.replicas = ReplicaManager(
            cfg.broker_id,
            replication_config(cfg, self._tls, self.alter_isr),
            self.zk,
            self.events,
            self._topic_configs,
        )
        self.replicas.startup()
        self.handler = ControlRequestHandler(
            cfg.broker_id,
            lambda: self.broker_epoch,
            self.events,
            self._controlled_shutdown,
            self.replicas,
            self._elect_leaders,
            cfg.bug_switches,
        )
        self._log_dir_failures = LogDirFailureHandler(
            cfg.broker_id,
            self.replicas.log_dir_failures,
            self.replicas,
            self.zk,
            self.events,
            cfg.on_log_dir_failure,
            self._halt,
            self.handler.take_offline,
        )
        self._log_dir_failures.start()
        guard = RequestGuard(self.events)
        server = RpcServer(
            GuardedBrokerControl(self.handler, guard, self._alter_isr),
            GuardedClientApi(
                ClientApi(self.handler.metadata_cache, self.replicas, self.events), guard
            ),
            workers=GRPC_WORKERS,
            tls=self._tls,
            access=AccessPolicy(frozenset({BROKER}), self._on_refused) if self._tls else None,
            control_around=collector.paused,
        )
        self.port = server.start(cfg.listen_host, cfg.port)
        self._server = server

        self.registration = BrokerRegistration(
            self.zk,
            cfg.broker_id,
            cfg.advertised_host,
            self.port,
            self.events,
            wait_for_stale_s=cfg.registration_stale_wait_ms / 1000,
            rack=cfg.rack,
            security_protocol="SSL" if self._tls is not None else "PLAINTEXT",
            bug_switches=cfg.bug_switches,
        )
        self.controller = KafkaController(
            cfg.broker_id,
            self.zk,
            self.events,
            register_broker=self._reregister,
            config=ControllerConfig(
                cfg.unclean_leader_election_enable,
                cfg.delete_topic_enable,
                cfg.auto_leader_rebalance_enable,
                cfg.leader_imbalance_per_broker_percentage,
                cfg.leader_imbalance_check_interval_s,
                cfg.bug_switches,
                ReaderSettings(
                    cfg.zk_connect,
                    cfg.zk_session_timeout_ms / 1000,
                    tuple(cfg.zk_credentials.auth_data) if cfg.zk_credentials else (),
                    cfg.state_reader_processes,
                    cfg.state_reader_min_partitions,
                    tuple(cfg.zk_tls.kazoo_options().items()) if cfg.zk_tls else (),
                ),
                candidate=cfg.controller_candidate,
            ),
            connect=functools.partial(grpc_channel, tls=self._tls),
        )
        observe_commits(self._kazoo, self.controller.writes_committed)
        self._kazoo.add_listener(
            SessionListener(
                self._kazoo,
                self.events,
                on_expired=self._on_session_expired,
                on_new_session=self.controller.on_new_session,
                on_suspended=self.controller.on_session_suspended,
                on_connected=self.controller.on_session_connected,
            )
        )
        if cfg.metrics_port is not None:
            self._metrics_server, self.metrics_port = serve_metrics(
                cfg.listen_host, cfg.metrics_port, self.controller, self.replicas, self.state
            )
        self.registration.register()
        self.handler.on_registered()
        self._write_health()
        self.controller.startup()
        self._config_changes = ConfigChangeListener(
            ConfigChangesZk(self.zk), self._topic_config, self._on_topic_config, self.events
        )
        self._config_changes.start()
        self.state.become(BrokerState.RUNNING_AS_BROKER)

    def _halt(self) -> None:
        """Kafka's `Exit.halt(1)` once the last log directory failed
        (`log-dir-failure-handler`): no shutdown, the ZooKeeper session left to expire."""
        os._exit(1)

    def _on_handshake_refused(self, failure: HandshakeFailure) -> None:
        """A TLS handshake failed (`grpc-trace-reader`)."""
        self.events.emit(
            TlsHandshakeRefused(peer=failure.peer, reason=failure.reason, error=failure.error),
        )

    def _on_refused(self, refusal: Refusal) -> None:
        """An authenticated caller may not call a method (`grpc-worker*`)."""
        self.events.emit(UnauthorizedRequest(**asdict(refusal)))

    def _topic_config(self, topic: str) -> dict[str, str]:
        return self._topic_configs([topic]).get(topic, {})

    def _topic_configs(self, topics: Collection[str]) -> dict[str, dict[str, str]]:
        """The overrides of `topics` (read pipelined); a topic without any has none. A lost
        connection is waited out within the session (the client's command retry), as
        Kafka's ZooKeeper client blocks until it reconnects: a LeaderAndIsr naming a new
        topic while the connection is re-made is applied, not failed."""
        found = self.zk.kazoo.retry(self.zk.get_topic_configs, topics).found
        return {topic: dict(config.config) for topic, config in found.items()}

    def _on_topic_config(self, topic: str, overrides: dict[str, str]) -> None:
        """A topic's overrides changed (`config-change-listener`)."""
        if self.replicas is not None:
            self.replicas.update_topic_config(topic, overrides)
        if self.controller is not None:
            self.controller.on_topic_config_change(topic)

    def _reregister(self) -> int:
        assert self.registration is not None
        epoch = self.registration.register()
        self._write_health()
        return epoch

    def _on_session_expired(self) -> None:
        self._clear_health()
        if self.controller is not None:
            self.controller.on_session_expired()

    def _controlled_shutdown(
        self, request: m.ControlledShutdownRequest
    ) -> m.ControlledShutdownResponse:
        if self.controller is None:
            return m.ControlledShutdownResponse(Errors.NOT_CONTROLLER)
        return self.controller.controlled_shutdown(request)

    def _elect_leaders(self, request: m.ElectLeadersRequest) -> m.ElectLeadersResponse:
        if self.controller is None:
            return m.ElectLeadersResponse(Errors.NOT_CONTROLLER)
        return self.controller.elect_leaders(request)

    def _alter_isr(self, request: m.AlterIsrRequest) -> m.AlterIsrResponse:
        if self.controller is None:
            return m.AlterIsrResponse(Errors.NOT_CONTROLLER)
        return self.controller.alter_isr(request)

    def _write_health(self) -> None:
        path = self.config.health_file
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            fields = (self.config.broker_id, self.broker_epoch, self.port, self.metrics_port or 0)
            path.write_text(" ".join(str(f) for f in fields) + "\n")

    def _clear_health(self) -> None:
        path = self.config.health_file
        if path is not None:
            path.unlink(missing_ok=True)

    def controlled_shutdown(self) -> bool:
        """Ask the controller to move this broker's leaderships away before it stops
        (Kafka's controlled shutdown, `broker_node.controlled_shutdown`): True once it has
        nothing left to move."""
        cfg = self.config

        def record(attempt: int, outcome: str) -> None:
            self.events.emit(
                ControlledShutdownAttempt(
                    broker_id=cfg.broker_id,
                    broker_epoch=self.broker_epoch,
                    attempt=attempt,
                    outcome=outcome,
                ),
            )

        done = ask_until_done(
            cfg.controlled_shutdown_max_retries,
            cfg.controlled_shutdown_retry_backoff_ms / 1000,
            lambda: ask_controller(self.zk, cfg.broker_id, self.broker_epoch, self._tls),
            record,
            self._stopping.wait,
        )
        if not done:
            log.warning("controlled shutdown did not complete; shutting down uncleanly")
        return done

    def stop(self) -> None:
        """Stop serving and close the session (idempotent): first a controlled shutdown
        (when enabled and registered), so no partition is left without a leader."""
        if (
            self.config.controlled_shutdown_enable
            and self.registration is not None
            and self.broker_epoch >= 0
            and self._server is not None
        ):
            if self.state.state is BrokerState.RUNNING_AS_BROKER:
                self.state.become(BrokerState.PENDING_CONTROLLED_SHUTDOWN)
            self.controlled_shutdown()
        running = self.state.state is not BrokerState.NOT_RUNNING
        if running:  # not when never started or stopped already
            self.state.become(BrokerState.BROKER_SHUTTING_DOWN)
        self._clear_health()
        if self._config_changes is not None:
            self._config_changes.stop()
        if self.controller is not None:
            self.controller.shutdown()
        if self._server is not None:
            if self.replicas is not None:  # the followers' long polls need not run out
                self.replicas.release_fetches()
            self._server.stop(grace_s=1.0)
            self._server = None
        if self._log_dir_failures is not None:  # joined below: its poll must not hold the
            self._log_dir_failures.stop(wait=False)  # fetchers up (they could rejoin an ISR)
        if self.alter_isr is not None:
            self.alter_isr.stop()
        if self.replicas is not None:
            self.replicas.shutdown()
        if self._log_dir_failures is not None:
            self._log_dir_failures.stop()
        if self._metrics_server is not None:
            self._metrics_server.shutdown()
            self._metrics_server = None
        try:
            self._kazoo.stop()
            self._kazoo.close()
        except Exception:  # stopping must not fail because ZooKeeper is gone
            log.exception("closing the ZooKeeper session failed")
        self.events.emit(NodeStopped(broker_id=self.config.broker_id))
        if running:
            self.state.become(BrokerState.NOT_RUNNING)
        if self._tap is not None:
            self._tap.stop()
            self._tap = None
        self.events.close()
