"""The options of `python -m broker_node`: each flag with its default and help, the
environment variable that may set it (the flag in upper snake case), and the parser that
reads them over a given environment (`build_parser`). `broker_node.config` checks the
values and builds `BrokerConfig`. Main thread.
"""

from __future__ import annotations

import argparse
import os
import socket
from collections.abc import Mapping

from domain.flush import FLUSH_INTERVAL_FLAG, NEVER_FLUSH
from domain.profiles import (
    DEFAULT_PROFILE,
    FAST,
    KAFKA,
    PROFILE_FLAG,
    ProfileError,
    env_name,
    setting,
)
from domain.protocols import (
    DEFAULT_INTER_BROKER_PROTOCOL,
    IBP_2_6,
    IBP_2_7,
    INTER_BROKER_PROTOCOL_FLAG,
)

__all__ = ["build_parser", "default_state_readers", "env_name"]


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


#: Every option: flag, default (None: required, unset, or chosen by the profile), help. The
#: environment variable is the flag in upper snake case (`--zk-connect` -> `ZK_CONNECT`),
#: but `TESTBED_PROFILE` for `--profile`.
_OPTIONS: tuple[tuple[str, str | None, str], ...] = (
    ("--broker-id", None, "broker id, >= 0"),
    ("--zk-connect", None, "ZooKeeper connect string host:port[,host:port...][/chroot]"),
    (
        PROFILE_FLAG,
        DEFAULT_PROFILE,
        f"the defaults of the timing options: {KAFKA} (Kafka 2.8's) or {FAST} (shorter, for "
        "tests and chaos runs); an option given explicitly wins over its profile",
    ),
    ("--zk-session-timeout-ms", None, "ZooKeeper session timeout"),
    (
        "--zk-connection-timeout-ms",
        None,
        "how long to wait for the first connection",
    ),
    (
        "--zk-digest-file",
        None,
        "file holding <user>:<password> (mode 0600): authenticate to ZooKeeper with it and "
        "create every znode with Kafka's secure ACLs (default: no authentication)",
    ),
    (
        "--zk-tls-dir",
        None,
        "connect to ZooKeeper over TLS, trusting the CA and presenting the broker "
        "certificate of this directory (`python -m security init`); unset or 'off': plaintext",
    ),
    ("--listen-host", "0.0.0.0", "bind address"),
    ("--port", "9092", "gRPC port; 0 picks a free one"),
    ("--advertised-host", socket.gethostname(), "host name other brokers and clients use"),
    (
        "--registration-stale-wait-ms",
        None,
        "how long to retry registering while another ZooKeeper session still holds this "
        "broker id (a previous process killed moments ago) before exiting with status 1",
    ),
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
    (
        "--on-log-dir-failure",
        "halt",
        "once an I/O error takes the log directory offline: 'halt' stops at once, as Kafka "
        "halts a broker whose last log dir failed; 'notify' writes "
        "/log_dir_event_notification and keeps running, as with other log dirs still online",
    ),
    (
        INTER_BROKER_PROTOCOL_FLAG,
        DEFAULT_INTER_BROKER_PROTOCOL,
        f"Kafka's inter.broker.protocol.version: {IBP_2_6} (leaders write ISR changes to "
        f"ZooKeeper) or {IBP_2_7} (leaders send AlterIsr to the controller, KIP-497)",
    ),
    ("--replica-lag-time-max-ms", None, "a follower this long behind leaves the ISR"),
    ("--min-insync-replicas", "1", "broker default of min.insync.replicas for acks=all"),
    (
        FLUSH_INTERVAL_FLAG,
        str(NEVER_FLUSH),
        "fsync a partition's log once this many messages were appended since its last "
        "fsync, before they count (Kafka's log.flush.interval.messages); the default, "
        "Kafka's Long.MAX_VALUE, never does: flushing is left to the operating system",
    ),
    (
        "--isr-change-blackout-ms",
        None,
        "ISR changes are announced once none happened for this long",
    ),
    (
        "--replica-high-watermark-checkpoint-interval-ms",
        None,
        "a log writes a rising high watermark to its hw-checkpoint at most this often",
    ),
    (
        "--max-incremental-fetch-session-cache-slots",
        None,
        "incremental fetch sessions (KIP-227) this broker keeps as a leader",
    ),
    (
        "--min-incremental-fetch-session-eviction-ms",
        None,
        "idle time after which a new fetch session may take an old one's slot",
    ),
    (
        "--controlled-shutdown-enable",
        "true",
        "on SIGTERM, ask the controller to move leaderships first, true/false",
    ),
    (
        "--controlled-shutdown-max-retries",
        None,
        "attempts before an unclean shutdown",
    ),
    ("--controlled-shutdown-retry-backoff-ms", None, "wait after each failed attempt"),
    (
        "--auto-leader-rebalance-enable",
        "true",
        "move leaderships back to preferred replicas periodically, true/false",
    ),
    ("--leader-imbalance-check-interval-seconds", None, "how often the imbalance is checked"),
    (
        "--leader-imbalance-per-broker-percentage",
        None,
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
        "--controller-candidate",
        "true",
        "whether this broker runs for controller, true/false; false (not in Kafka) lets a "
        "benchmark choose which broker takes over",
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


def _shown(flag: str, name: str, default: str | None) -> str:
    """The variable and default named in an option's help."""
    try:
        item = setting(flag)
    except ProfileError:
        return f"{name}, default {default}" if default is not None else name
    kafka = item.kafka if item.kafka is not None else f"that of {item.fallback}"
    return f"{name}, default {kafka}, {FAST} profile {item.fast}"


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
        shown = _shown(flag, name, default)
        parser.add_argument(flag, default=_env(env, name) or default, help=f"{text} ({shown})")
    return parser
