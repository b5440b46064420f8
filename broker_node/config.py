"""`BrokerConfig`: the broker process's configuration, built once at the edge from the
options of `broker_node.options`.

Command-line arguments win over environment variables, which win over defaults; the
defaults of the timing options are those of the profile chosen (`--profile`,
`TESTBED_PROFILE`: `kafka`, Kafka 2.8's, unless told; `domain.profiles`). This is the only
module of the broker that reads the environment. Bad values end the process
with a clear message and exit code 2. Main thread.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from broker_node.log_dir_failure import LogDirFailureAction
from broker_node.options import build_parser
from bugs import NO_BUGS, BugSwitchError, BugSwitches, parse_switches, require_allowed
from domain.flush import FLUSH_INTERVAL_FLAG, NEVER_FLUSH
from domain.profiles import KAFKA, PROFILE_FLAG, SETTINGS, ProfileError, check_profile, resolve
from domain.protocols import (
    DEFAULT_INTER_BROKER_PROTOCOL,
    INTER_BROKER_PROTOCOL_FLAG,
    check_inter_broker_protocol,
)
from rpc.wire import traced_environment
from security.secret_files import SecretFileError
from security.tls_files import BROKER, TlsMaterialError
from security.zk_credentials import ZkDigestCredentials
from security.zk_credentials import load as load_zk_credentials
from security.zk_tls import ZkTls, zk_tls_choice

_ZK_CONNECT = re.compile(
    r"[A-Za-z0-9.\-_\[\]:]+:[0-9]{1,5}(,[A-Za-z0-9.\-_\[\]:]+:[0-9]{1,5})*(/[^/\s]+)*", re.ASCII
)


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    """Everything a broker process needs to know."""

    broker_id: int
    zk_connect: str
    zk_session_timeout_ms: int = 18_000
    zk_connection_timeout_ms: int = 18_000
    listen_host: str = "0.0.0.0"
    port: int = 9092
    advertised_host: str = "localhost"
    run_dir: Path | None = None
    health_file: Path | None = None
    unclean_leader_election_enable: bool = False
    metrics_port: int | None = 9404
    data_dir: Path | None = None
    replica_lag_time_max_ms: int = 30_000
    min_insync_replicas: int = 1
    #: Kafka's `log.flush.interval.messages`; None: never (Kafka's Long.MAX_VALUE).
    log_flush_interval_messages: int | None = None
    isr_change_blackout_ms: int = 5_000
    #: Kafka's `replica.high.watermark.checkpoint.interval.ms`.
    replica_high_watermark_checkpoint_interval_ms: int = 5_000
    #: Kafka's `max.incremental.fetch.session.cache.slots` (KIP-227).
    max_incremental_fetch_session_cache_slots: int = 1_000
    #: How long a fetch session stays idle before a new one of the same privilege may take
    #: its slot (a constant in Kafka: 120 s).
    min_incremental_fetch_session_eviction_ms: int = 120_000
    controlled_shutdown_enable: bool = True
    #: How long, in microseconds, one of the process's threads may hold Python's GIL while
    #: another waits for it (`sys.setswitchinterval`; Python's default is 5,000).
    gil_switch_interval_us: int = 1_000
    #: Allocations between two collections of the young generation of Python's cyclic
    #: garbage collector (`gc.set_threshold`; Python's default is 700). A broker of
    #: thousands of partitions keeps millions of long-lived objects, which the default
    #: has the collector walk again and again while they are made.
    gc_young_threshold: int = 50_000
    #: Turn the cyclic garbage collector off while the controller processes an event and
    #: while the broker applies a LeaderAndIsr or UpdateMetadata (`controller.collector`).
    gc_pause_during_changes: bool = True
    delete_topic_enable: bool = True
    #: Whether the broker runs for controller (Kafka's brokers always do).
    controller_candidate: bool = True
    #: Helper processes that read partition states alongside the controller when it loads
    #: the context of at least `state_reader_min_partitions` partitions (the command
    #: line's default: `default_state_readers()`).
    state_reader_processes: int = 0
    state_reader_min_partitions: int = 5_000
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_check_interval_s: float = 300.0
    leader_imbalance_per_broker_percentage: int = 10
    controlled_shutdown_max_retries: int = 3
    controlled_shutdown_retry_backoff_ms: int = 5_000
    #: How long registration is retried while another session holds `/brokers/ids/N`;
    #: 0 (Kafka's behaviour): the broker exits at once.
    registration_stale_wait_ms: int = 0
    #: The profile the timing defaults came from (`domain.profiles`).
    profile: str = KAFKA
    #: Kafka's `broker.rack`, registered under `rack` in `/brokers/ids/N`; None: no rack.
    rack: str | None = None
    #: The cluster's ZooKeeper digest identity (`--zk-digest-file`); None: no
    #: authentication and open znodes. With it, Kafka's `zookeeper.set.acl=true`.
    zk_credentials: ZkDigestCredentials | None = None
    #: TLS to ZooKeeper with the broker certificate (`--zk-tls-dir`); None: plaintext.
    zk_tls: ZkTls | None = None
    #: Historical bugs re-introduced on purpose (`bugs/`); none outside chaos runs and tests.
    bug_switches: BugSwitches = NO_BUGS
    #: The cluster's TLS directory (`security.tls_files`); None: plaintext gRPC.
    tls_dir: Path | None = None
    #: What follows an I/O error in the log directory (`broker_node.log_dir_failure`).
    on_log_dir_failure: LogDirFailureAction = LogDirFailureAction.HALT
    #: Kafka's `inter.broker.protocol.version` (`domain.protocols`): how ISR changes
    #: reach ZooKeeper.
    inter_broker_protocol: str = DEFAULT_INTER_BROKER_PROTOCOL

    @property
    def log_dir(self) -> Path:
        """Where partition logs live: `data_dir`, else `<run_dir>/data/broker<id>`."""
        if self.data_dir is not None:
            return self.data_dir
        return (self.run_dir or Path(".")) / "data" / self.node_name

    @property
    def node_name(self) -> str:
        """The name used in event logs and run directories: `broker<id>`."""
        return f"broker{self.broker_id}"


def _bool(parser: argparse.ArgumentParser, name: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value not in ("true", "false"):
        parser.error(f"{name} must be true or false, got {raw!r}")
    return value == "true"


def _int(parser: argparse.ArgumentParser, name: str, raw: str | None, low: int, high: int) -> int:
    if raw is None:
        parser.error(f"{name} is required")
    try:
        value = int(raw)
    except ValueError:
        parser.error(f"{name} must be an integer, got {raw!r}")
    if not low <= value <= high:
        parser.error(f"{name} must be between {low} and {high}, got {value}")
    return value


def load_config(
    argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None
) -> BrokerConfig:
    """Parse `argv` over `env` (defaults: the process's); exit 2 with a message on bad input."""
    env = os.environ if env is None else env
    parser = build_parser(env)
    args = parser.parse_args(argv)
    try:
        profile = check_profile(args.profile)
    except ProfileError as exc:
        parser.error(f"{PROFILE_FLAG}: {exc}")
    chosen = resolve(profile, {item.flag: getattr(args, _dest(item.flag)) for item in SETTINGS})

    def timing(flag: str, low: int, high: int) -> int:
        return _int(parser, flag, chosen[flag], low, high)

    broker_id = _int(parser, "--broker-id", args.broker_id, 0, 2**31 - 1)
    if not args.zk_connect:
        parser.error("--zk-connect is required (or set ZK_CONNECT)")
    if not _ZK_CONNECT.fullmatch(args.zk_connect):
        parser.error(
            "--zk-connect must look like host:port[,host:port...][/chroot], "
            f"got {args.zk_connect!r}"
        )
    session = timing("--zk-session-timeout-ms", 1000, 600_000)
    connection = timing("--zk-connection-timeout-ms", 100, 600_000)
    port = _int(parser, "--port", args.port, 0, 65535)
    metrics_port = (
        None
        if args.metrics_port.strip().lower() == "off"
        else _int(parser, "--metrics-port", args.metrics_port, 0, 65535)
    )
    lag = timing("--replica-lag-time-max-ms", 100, 3_600_000)
    min_isr = _int(parser, "--min-insync-replicas", args.min_insync_replicas, 1, 1000)
    blackout = timing("--isr-change-blackout-ms", 0, 600_000)
    retries = timing("--controlled-shutdown-max-retries", 0, 100)
    backoff = timing("--controlled-shutdown-retry-backoff-ms", 0, 600_000)
    run_dir = Path(args.run_dir) if args.run_dir else None
    data_dir = Path(args.data_dir) if args.data_dir else None
    if not args.advertised_host:
        parser.error("--advertised-host must not be empty")
    try:
        bug_switches = require_allowed(parse_switches(args.bug_switches), args.bug_switches_context)
    except BugSwitchError as error:
        parser.error(str(error))
    rack = args.broker_rack.strip() if args.broker_rack else None
    credentials = None
    if args.zk_digest_file:
        try:
            credentials = load_zk_credentials(Path(args.zk_digest_file))
        except SecretFileError as exc:
            parser.error(f"--zk-digest-file: {exc}")
    try:
        zk_tls = zk_tls_choice(_tls_dir(args.zk_tls_dir), BROKER)
    except TlsMaterialError as exc:
        parser.error(f"--zk-tls-dir: {exc}")
    if args.broker_rack is not None and not rack:
        parser.error("--broker-rack must not be blank")
    return BrokerConfig(
        broker_id=broker_id,
        zk_connect=args.zk_connect,
        zk_session_timeout_ms=session,
        zk_connection_timeout_ms=connection,
        listen_host=args.listen_host,
        port=port,
        advertised_host=args.advertised_host,
        run_dir=run_dir,
        health_file=Path(args.health_file) if args.health_file else None,
        metrics_port=metrics_port,
        data_dir=data_dir,
        replica_lag_time_max_ms=lag,
        min_insync_replicas=min_isr,
        log_flush_interval_messages=_flush_interval(parser, args.log_flush_interval_messages),
        isr_change_blackout_ms=blackout,
        replica_high_watermark_checkpoint_interval_ms=timing(
            "--replica-high-watermark-checkpoint-interval-ms", 0, 3_600_000
        ),
        max_incremental_fetch_session_cache_slots=timing(
            "--max-incremental-fetch-session-cache-slots", 0, 1_000_000
        ),
        min_incremental_fetch_session_eviction_ms=timing(
            "--min-incremental-fetch-session-eviction-ms", 0, 3_600_000
        ),
        controlled_shutdown_enable=_bool(
            parser, "--controlled-shutdown-enable", args.controlled_shutdown_enable
        ),
        controlled_shutdown_max_retries=retries,
        gil_switch_interval_us=_int(
            parser, "--gil-switch-interval-us", args.gil_switch_interval_us, 100, 100_000
        ),
        gc_pause_during_changes=_bool(
            parser, "--gc-pause-during-changes", args.gc_pause_during_changes
        ),
        gc_young_threshold=_int(
            parser, "--gc-young-threshold", args.gc_young_threshold, 100, 10_000_000
        ),
        delete_topic_enable=_bool(parser, "--delete-topic-enable", args.delete_topic_enable),
        controller_candidate=_bool(parser, "--controller-candidate", args.controller_candidate),
        state_reader_processes=_int(
            parser, "--state-reader-processes", args.state_reader_processes, 0, 16
        ),
        state_reader_min_partitions=_int(
            parser,
            "--state-reader-min-partitions",
            args.state_reader_min_partitions,
            1,
            100_000_000,
        ),
        auto_leader_rebalance_enable=_bool(
            parser, "--auto-leader-rebalance-enable", args.auto_leader_rebalance_enable
        ),
        leader_imbalance_check_interval_s=timing(
            "--leader-imbalance-check-interval-seconds", 1, 86_400
        ),
        leader_imbalance_per_broker_percentage=timing(
            "--leader-imbalance-per-broker-percentage", 0, 100
        ),
        controlled_shutdown_retry_backoff_ms=backoff,
        registration_stale_wait_ms=timing("--registration-stale-wait-ms", 0, 3_600_000),
        profile=profile,
        unclean_leader_election_enable=_bool(
            parser, "--unclean-leader-election-enable", args.unclean_leader_election_enable
        ),
        rack=rack,
        bug_switches=bug_switches,
        zk_credentials=credentials,
        zk_tls=zk_tls,
        tls_dir=_tls_dir(args.tls_dir),
        on_log_dir_failure=_log_dir_failure_action(parser, args.on_log_dir_failure),
        inter_broker_protocol=_inter_broker_protocol(parser, args.inter_broker_protocol),
    )


def _inter_broker_protocol(parser: argparse.ArgumentParser, raw: str) -> str:
    try:
        return check_inter_broker_protocol(raw)
    except ValueError as exc:
        parser.error(f"{INTER_BROKER_PROTOCOL_FLAG}: {exc}")


def _flush_interval(parser: argparse.ArgumentParser, raw: str | None) -> int | None:
    value = _int(parser, FLUSH_INTERVAL_FLAG, raw, 1, NEVER_FLUSH)
    return None if value == NEVER_FLUSH else value


def _log_dir_failure_action(parser: argparse.ArgumentParser, raw: str) -> LogDirFailureAction:
    try:
        return LogDirFailureAction(raw.strip().lower())
    except ValueError:
        parser.error(f"--on-log-dir-failure must be halt or notify, got {raw!r}")


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _tls_dir(raw: str | None) -> Path | None:
    if raw is None or raw.strip().lower() in ("", "off"):
        return None
    return Path(raw)


def trace_environment(
    config: BrokerConfig, env: Mapping[str, str] | None = None
) -> dict[str, str] | None:
    """The environment the broker must be started again with so that gRPC records refused
    TLS handshakes (`rpc.wire.handshake_trace`), or None when it needs no restart: no TLS,
    or the tracer is already on in `env` (default: the process's)."""
    if config.tls_dir is None:
        return None
    return traced_environment(os.environ if env is None else env)
