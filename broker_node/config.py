"""`BrokerConfig`: the broker process's configuration, built once at the edge.

Command-line arguments win over environment variables, which win over defaults. This is
the only module of the broker that reads the environment. Bad values end the process
with a clear message and exit code 2. Main thread.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bugs import NO_BUGS, BugSwitchError, BugSwitches, parse_switches, require_allowed
from rpc.wire import traced_environment
from security.secret_files import SecretFileError
from security.zk_credentials import ZkDigestCredentials
from security.zk_credentials import load as load_zk_credentials

_ZK_CONNECT = re.compile(
    r"[A-Za-z0-9.\-_\[\]:]+:[0-9]{1,5}(,[A-Za-z0-9.\-_\[\]:]+:[0-9]{1,5})*(/[^/\s]+)*", re.ASCII
)


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    """Everything a broker process needs to know."""

    broker_id: int
    zk_connect: str
    zk_session_timeout_ms: int = 6000
    zk_connection_timeout_ms: int = 30000
    listen_host: str = "0.0.0.0"
    port: int = 9092
    advertised_host: str = "localhost"
    run_dir: Path | None = None
    health_file: Path | None = None
    unclean_leader_election_enable: bool = False
    metrics_port: int | None = 9404
    data_dir: Path | None = None
    replica_lag_time_max_ms: int = 10_000
    min_insync_replicas: int = 1
    isr_change_blackout_ms: int = 5_000
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
    #: Helper processes that read partition states alongside the controller when it loads
    #: the context of at least `state_reader_min_partitions` partitions (the command
    #: line's default: `default_state_readers()`).
    state_reader_processes: int = 0
    state_reader_min_partitions: int = 5_000
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_check_interval_s: float = 300.0
    leader_imbalance_per_broker_percentage: int = 10
    controlled_shutdown_max_retries: int = 3
    controlled_shutdown_retry_backoff_ms: int = 1_000
    #: Kafka's `broker.rack`, registered under `rack` in `/brokers/ids/N`; None: no rack.
    rack: str | None = None
    #: The cluster's ZooKeeper digest identity (`--zk-digest-file`); None: no
    #: authentication and open znodes. With it, Kafka's `zookeeper.set.acl=true`.
    zk_credentials: ZkDigestCredentials | None = None
    #: Historical bugs re-introduced on purpose (`bugs/`); none outside chaos runs and tests.
    bug_switches: BugSwitches = NO_BUGS
    #: The cluster's TLS directory (`security.tls_files`); None: plaintext gRPC.
    tls_dir: Path | None = None

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


class _Parser(argparse.ArgumentParser):
    """argparse with environment-variable defaults named in the help."""


def _env(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    return value if value not in (None, "") else None


def default_state_readers(cpus: int | None = None) -> int:
    """The state reader processes a broker starts by default on a host of `cpus` CPUs
    (`os.cpu_count()` when None): none on two CPUs or fewer, where they compete with the
    ZooKeeper servers and the other brokers for the same cores (a failover after kill -9
    at 100,000 partitions was no faster with them, docs/architecture.md), else up to two."""
    count = os.cpu_count() if cpus is None else cpus
    return max(0, min(2, (count or 1) - 2))


#: Every option: flag, default (None: required or unset), help. The environment variable
#: is the flag in upper snake case (`--zk-connect` -> `ZK_CONNECT`).
_OPTIONS: tuple[tuple[str, str | None, str], ...] = (
    ("--broker-id", None, "broker id, >= 0"),
    ("--zk-connect", None, "ZooKeeper connect string host:port[,host:port...][/chroot]"),
    ("--zk-session-timeout-ms", "6000", "ZooKeeper session timeout"),
    ("--zk-connection-timeout-ms", "30000", "how long to wait for the first connection"),
    (
        "--zk-digest-file",
        None,
        "file holding <user>:<password> (mode 0600): authenticate to ZooKeeper with it and "
        "create every znode with Kafka's secure ACLs (default: no authentication)",
    ),
    ("--listen-host", "0.0.0.0", "bind address"),
    ("--port", "9092", "gRPC port; 0 picks a free one"),
    ("--advertised-host", socket.gethostname(), "host name other brokers and clients use"),
    (
        "--broker-rack",
        None,
        "Kafka's broker.rack: the rack registered with the broker, used by rack-aware "
        "replica assignment (default: none)",
    ),
    (
        "--tls-dir",
        None,
        "serve and call gRPC over mutual TLS with the CA and broker certificate in this "
        "directory (`python -m security init`); unset or 'off': plaintext",
    ),
    ("--run-dir", None, "run directory; events go to <run-dir>/events/broker<id>.jsonl"),
    ("--health-file", None, "file written while registered and serving, for health checks"),
    ("--metrics-port", "9404", "Prometheus endpoint port; 0 picks a free one, 'off' disables"),
    (
        "--data-dir",
        None,
        "where partition logs live (default <run-dir>/data/broker<id>, or ./data/broker<id>)",
    ),
    ("--replica-lag-time-max-ms", "10000", "a follower this long behind leaves the ISR"),
    ("--min-insync-replicas", "1", "broker default of min.insync.replicas for acks=all"),
    (
        "--isr-change-blackout-ms",
        "5000",
        "ISR changes are announced once none happened for this long (Kafka: 5000)",
    ),
    (
        "--max-incremental-fetch-session-cache-slots",
        "1000",
        "incremental fetch sessions (KIP-227) this broker keeps as a leader (Kafka: 1000)",
    ),
    (
        "--min-incremental-fetch-session-eviction-ms",
        "120000",
        "idle time after which a new fetch session may take an old one's slot (Kafka: 120000)",
    ),
    (
        "--controlled-shutdown-enable",
        "true",
        "on SIGTERM, ask the controller to move leaderships first, true/false",
    ),
    (
        "--controlled-shutdown-max-retries",
        "3",
        "attempts after the first before an unclean shutdown",
    ),
    ("--controlled-shutdown-retry-backoff-ms", "1000", "wait between attempts"),
    (
        "--auto-leader-rebalance-enable",
        "true",
        "move leaderships back to preferred replicas periodically, true/false",
    ),
    ("--leader-imbalance-check-interval-seconds", "300", "how often the imbalance is checked"),
    (
        "--leader-imbalance-per-broker-percentage",
        "10",
        "a broker leading fewer of its preferred partitions than this share is rebalanced",
    ),
    ("--delete-topic-enable", "true", "Kafka's delete.topic.enable, true/false"),
    (
        "--state-reader-processes",
        str(default_state_readers()),
        "helper processes that read partition states alongside the controller when it "
        "loads a large context; 0: none (default: none on 2 CPUs or fewer, else up to 2)",
    ),
    (
        "--state-reader-min-partitions",
        "5000",
        "partitions from which a context load uses the state reader processes",
    ),
    (
        "--gil-switch-interval-us",
        "1000",
        "how long one thread may hold Python's GIL while another waits (Python: 5000)",
    ),
    (
        "--gc-young-threshold",
        "50000",
        "allocations between two young-generation garbage collections (Python: 700)",
    ),
    (
        "--gc-pause-during-changes",
        "true",
        "no cyclic garbage collection while a controller event or a LeaderAndIsr or "
        "UpdateMetadata is processed, true/false",
    ),
    (
        "--unclean-leader-election-enable",
        "false",
        "broker default for unclean leader election, true/false",
    ),
    (
        "--bug-switches",
        None,
        "comma-separated historical Kafka bugs to re-introduce (docs/bugs.md); refused "
        "unless --bug-switches-context is chaos or test",
    ),
    ("--bug-switches-context", None, "chaos or test: where bug switches are allowed"),
)


def env_name(flag: str) -> str:
    """The environment variable of an option: `--zk-connect` -> `ZK_CONNECT`."""
    return flag.lstrip("-").replace("-", "_").upper()


def build_parser(env: Mapping[str, str]) -> argparse.ArgumentParser:
    """The command line of `python -m broker_node`, defaults taken from `env`."""
    parser = _Parser(
        prog="broker_node",
        description="A testbed broker: registers in ZooKeeper, runs for controller, serves "
        "the control-plane and data-plane RPCs. Each option can also be set by the "
        "environment variable shown.",
    )
    for flag, default, text in _OPTIONS:
        name = env_name(flag)
        shown = f"{name}, default {default}" if default is not None else name
        parser.add_argument(flag, default=_env(env, name) or default, help=f"{text} ({shown})")
    return parser


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
    broker_id = _int(parser, "--broker-id", args.broker_id, 0, 2**31 - 1)
    if not args.zk_connect:
        parser.error("--zk-connect is required (or set ZK_CONNECT)")
    if not _ZK_CONNECT.fullmatch(args.zk_connect):
        parser.error(
            "--zk-connect must look like host:port[,host:port...][/chroot], "
            f"got {args.zk_connect!r}"
        )
    session = _int(parser, "--zk-session-timeout-ms", args.zk_session_timeout_ms, 1000, 600_000)
    connection = _int(
        parser, "--zk-connection-timeout-ms", args.zk_connection_timeout_ms, 100, 600_000
    )
    port = _int(parser, "--port", args.port, 0, 65535)
    metrics_port = (
        None
        if args.metrics_port.strip().lower() == "off"
        else _int(parser, "--metrics-port", args.metrics_port, 0, 65535)
    )
    lag = _int(parser, "--replica-lag-time-max-ms", args.replica_lag_time_max_ms, 100, 3_600_000)
    min_isr = _int(parser, "--min-insync-replicas", args.min_insync_replicas, 1, 1000)
    blackout = _int(parser, "--isr-change-blackout-ms", args.isr_change_blackout_ms, 0, 600_000)
    retries = _int(
        parser, "--controlled-shutdown-max-retries", args.controlled_shutdown_max_retries, 0, 100
    )
    backoff = _int(
        parser,
        "--controlled-shutdown-retry-backoff-ms",
        args.controlled_shutdown_retry_backoff_ms,
        0,
        600_000,
    )
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
        isr_change_blackout_ms=blackout,
        max_incremental_fetch_session_cache_slots=_int(
            parser,
            "--max-incremental-fetch-session-cache-slots",
            args.max_incremental_fetch_session_cache_slots,
            0,
            1_000_000,
        ),
        min_incremental_fetch_session_eviction_ms=_int(
            parser,
            "--min-incremental-fetch-session-eviction-ms",
            args.min_incremental_fetch_session_eviction_ms,
            0,
            3_600_000,
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
        leader_imbalance_check_interval_s=_int(
            parser,
            "--leader-imbalance-check-interval-seconds",
            args.leader_imbalance_check_interval_seconds,
            1,
            86_400,
        ),
        leader_imbalance_per_broker_percentage=_int(
            parser,
            "--leader-imbalance-per-broker-percentage",
            args.leader_imbalance_per_broker_percentage,
            0,
            100,
        ),
        controlled_shutdown_retry_backoff_ms=backoff,
        unclean_leader_election_enable=_bool(
            parser, "--unclean-leader-election-enable", args.unclean_leader_election_enable
        ),
        rack=rack,
        bug_switches=bug_switches,
        zk_credentials=credentials,
        tls_dir=_tls_dir(args.tls_dir),
    )


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
