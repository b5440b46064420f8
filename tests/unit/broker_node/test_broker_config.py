"""`load_config(argv, env)`: environment defaults, command-line overrides, and every bad
value ending the process with exit code 2 and a message naming the option."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from broker_node.config import BrokerConfig, load_config, trace_environment
from broker_node.options import build_parser, default_state_readers
from domain.profiles import SETTINGS

BASE_ENV = {"BROKER_ID": "1", "ZK_CONNECT": "zk1:2181", "ADVERTISED_HOST": "broker1"}


def test_minimal_environment_gives_the_defaults() -> None:
    config = load_config([], BASE_ENV)
    assert config == BrokerConfig(
        broker_id=1,
        zk_connect="zk1:2181",
        zk_session_timeout_ms=18000,
        zk_connection_timeout_ms=18000,
        listen_host="0.0.0.0",
        port=9092,
        advertised_host="broker1",
        run_dir=None,
        health_file=None,
    )
    assert config.node_name == "broker1"


def test_every_option_is_read_from_the_environment() -> None:
    env = {
        "BROKER_ID": "3",
        "ZK_CONNECT": "zk1:2181,zk2:2181,zk3:2181/testbed",
        "ZK_SESSION_TIMEOUT_MS": "10000",
        "ZK_CONNECTION_TIMEOUT_MS": "5000",
        "LISTEN_HOST": "127.0.0.1",
        "PORT": "19092",
        "ADVERTISED_HOST": "broker3.local",
        "RUN_DIR": "/runs/r1",
        "HEALTH_FILE": "/tmp/healthy",
    }
    assert load_config([], env) == BrokerConfig(
        broker_id=3,
        zk_connect="zk1:2181,zk2:2181,zk3:2181/testbed",
        zk_session_timeout_ms=10000,
        zk_connection_timeout_ms=5000,
        listen_host="127.0.0.1",
        port=19092,
        advertised_host="broker3.local",
        run_dir=Path("/runs/r1"),
        health_file=Path("/tmp/healthy"),
    )


def test_command_line_overrides_the_environment() -> None:
    env = {
        **BASE_ENV,
        "ZK_SESSION_TIMEOUT_MS": "10000",
        "PORT": "19092",
        "RUN_DIR": "/runs/env",
    }
    argv = [
        "--broker-id",
        "7",
        "--zk-connect",
        "zkA:2182/chroot",
        "--zk-session-timeout-ms",
        "20000",
        "--zk-connection-timeout-ms",
        "1000",
        "--listen-host",
        "::",
        "--port",
        "0",
        "--advertised-host",
        "b7",
        "--run-dir",
        "/runs/argv",
        "--health-file",
        "/h",
    ]
    assert load_config(argv, env) == BrokerConfig(
        broker_id=7,
        zk_connect="zkA:2182/chroot",
        zk_session_timeout_ms=20000,
        zk_connection_timeout_ms=1000,
        listen_host="::",
        port=0,
        advertised_host="b7",
        run_dir=Path("/runs/argv"),
        health_file=Path("/h"),
    )


def test_empty_environment_values_count_as_unset() -> None:
    env = {**BASE_ENV, "PORT": "", "ZK_SESSION_TIMEOUT_MS": "", "RUN_DIR": ""}
    config = load_config([], env)
    assert (config.port, config.zk_session_timeout_ms, config.run_dir) == (9092, 18000, None)


def test_advertised_host_defaults_to_the_host_name() -> None:
    env = {"BROKER_ID": "1", "ZK_CONNECT": "zk1:2181"}
    assert load_config([], env).advertised_host == socket.gethostname()


@pytest.mark.parametrize(
    "zk_connect",
    [
        "zk1:2181",
        "zk1:2181,zk2:2182,zk3:2183",
        "zk1:2181/kafka",
        "zk1:2181,zk2:2181/kafka/cluster-a",
        "10.0.0.1:2181",
        "zk_1.example.com:2181",
    ],
)
def test_well_formed_connect_strings_are_accepted(zk_connect: str) -> None:
    assert load_config(["--zk-connect", zk_connect], BASE_ENV).zk_connect == zk_connect


@pytest.mark.parametrize(
    ("argv", "env", "option"),
    [
        pytest.param([], {"ZK_CONNECT": "zk1:2181"}, "--broker-id", id="broker-id-missing"),
        pytest.param(["--broker-id", "one"], BASE_ENV, "--broker-id", id="broker-id-word"),
        pytest.param(["--broker-id", "1.5"], BASE_ENV, "--broker-id", id="broker-id-decimal"),
        pytest.param(["--broker-id", "-1"], BASE_ENV, "--broker-id", id="broker-id-negative"),
        pytest.param(
            ["--broker-id", str(2**31)], BASE_ENV, "--broker-id", id="broker-id-over-int32"
        ),
        pytest.param(
            [], {**BASE_ENV, "BROKER_ID": "x"}, "--broker-id", id="broker-id-env-not-integer"
        ),
        pytest.param([], {"BROKER_ID": "1"}, "--zk-connect", id="zk-connect-missing"),
        pytest.param(["--zk-connect", "zk1"], BASE_ENV, "--zk-connect", id="zk-connect-no-port"),
        pytest.param(
            ["--zk-connect", "zk1:port"], BASE_ENV, "--zk-connect", id="zk-connect-port-word"
        ),
        pytest.param(
            ["--zk-connect", "zk1:2181,"], BASE_ENV, "--zk-connect", id="zk-connect-trailing-comma"
        ),
        pytest.param(
            ["--zk-connect", "zk1:2181 zk2:2181"], BASE_ENV, "--zk-connect", id="zk-connect-space"
        ),
        pytest.param(
            ["--zk-connect", "zk1:2181//kafka"], BASE_ENV, "--zk-connect", id="zk-connect-chroot-//"
        ),
        pytest.param(
            ["--zk-connect", "http://zk1:2181"], BASE_ENV, "--zk-connect", id="zk-connect-url"
        ),
        pytest.param(
            [], {**BASE_ENV, "ZK_CONNECT": "zk1:"}, "--zk-connect", id="zk-connect-env-bad"
        ),
        pytest.param(
            ["--zk-session-timeout-ms", "999"],
            BASE_ENV,
            "--zk-session-timeout-ms",
            id="session-timeout-too-low",
        ),
        pytest.param(
            ["--zk-session-timeout-ms", "600001"],
            BASE_ENV,
            "--zk-session-timeout-ms",
            id="session-timeout-too-high",
        ),
        pytest.param(
            ["--zk-session-timeout-ms", "6s"],
            BASE_ENV,
            "--zk-session-timeout-ms",
            id="session-timeout-not-integer",
        ),
        pytest.param(
            [],
            {**BASE_ENV, "ZK_SESSION_TIMEOUT_MS": "-6000"},
            "--zk-session-timeout-ms",
            id="session-timeout-env-negative",
        ),
        pytest.param(
            ["--zk-connection-timeout-ms", "99"],
            BASE_ENV,
            "--zk-connection-timeout-ms",
            id="connection-timeout-too-low",
        ),
        pytest.param(
            ["--zk-connection-timeout-ms", "abc"],
            BASE_ENV,
            "--zk-connection-timeout-ms",
            id="connection-timeout-not-integer",
        ),
        pytest.param(["--profile", "slow"], BASE_ENV, "--profile", id="profile-unknown"),
        pytest.param([], {**BASE_ENV, "TESTBED_PROFILE": "Fast"}, "--profile", id="profile-env"),
        pytest.param(
            ["--registration-stale-wait-ms", "-1"],
            BASE_ENV,
            "--registration-stale-wait-ms",
            id="stale-wait-negative",
        ),
        pytest.param(
            [],
            {**BASE_ENV, "TESTBED_PROFILE": "fast", "REPLICA_LAG_TIME_MAX_MS": "10s"},
            "--replica-lag-time-max-ms",
            id="lag-not-integer-under-a-profile",
        ),
        pytest.param(
            [],
            {**BASE_ENV, "REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS": "-1"},
            "--replica-high-watermark-checkpoint-interval-ms",
            id="hw-checkpoint-interval-negative",
        ),
        pytest.param(["--port", "65536"], BASE_ENV, "--port", id="port-too-high"),
        pytest.param(["--port", "-1"], BASE_ENV, "--port", id="port-negative"),
        pytest.param(["--port", "http"], BASE_ENV, "--port", id="port-not-integer"),
        pytest.param([], {**BASE_ENV, "PORT": "99999"}, "--port", id="port-env-too-high"),
        pytest.param(
            ["--advertised-host", ""], BASE_ENV, "--advertised-host", id="advertised-host-empty"
        ),
        pytest.param(["--no-such-option"], BASE_ENV, "--no-such-option", id="unknown-option"),
        pytest.param(
            ["--gil-switch-interval-us", "99"],
            BASE_ENV,
            "--gil-switch-interval-us",
            id="switch-interval-too-low",
        ),
        pytest.param(
            ["--gc-young-threshold", "99"], BASE_ENV, "--gc-young-threshold", id="gc-too-low"
        ),
        pytest.param(
            ["--state-reader-processes", "-1"],
            BASE_ENV,
            "--state-reader-processes",
            id="state-readers-negative",
        ),
        pytest.param(
            [],
            {**BASE_ENV, "STATE_READER_MIN_PARTITIONS": "0"},
            "--state-reader-min-partitions",
            id="state-reader-threshold-zero",
        ),
        pytest.param(
            [], {**BASE_ENV, "GC_YOUNG_THRESHOLD": "lots"}, "--gc-young-threshold", id="gc-text"
        ),
        pytest.param(
            [],
            {**BASE_ENV, "GIL_SWITCH_INTERVAL_US": "1ms"},
            "--gil-switch-interval-us",
            id="switch-interval-not-integer",
        ),
        pytest.param(
            ["--inter-broker-protocol", "2.8"],
            BASE_ENV,
            "--inter-broker-protocol",
            id="inter-broker-protocol-unknown",
        ),
    ],
)
def test_bad_value_exits_2_naming_the_option(
    argv: list[str], env: dict[str, str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as excinfo:
        load_config(argv, env)
    assert excinfo.value.code == 2
    error_lines = [
        line for line in capsys.readouterr().err.splitlines() if "broker_node: error:" in line
    ]
    assert len(error_lines) == 1
    assert option in error_lines[0]  # the usage line names every option; the error must too


def test_the_rack_comes_from_the_environment_or_the_command_line() -> None:
    """Kafka's broker.rack: `BROKER_RACK`, overridden by `--broker-rack`; none by default."""
    assert load_config([], BASE_ENV).rack is None
    assert load_config([], {**BASE_ENV, "BROKER_RACK": "eu-1a"}).rack == "eu-1a"
    overridden = load_config(["--broker-rack", "eu-1b"], {**BASE_ENV, "BROKER_RACK": "eu-1a"})
    assert overridden.rack == "eu-1b"


def test_a_blank_rack_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        load_config(["--broker-rack", "  "], BASE_ENV)
    assert exited.value.code == 2
    assert "--broker-rack must not be blank" in capsys.readouterr().err


def test_tls_is_off_unless_a_directory_is_given() -> None:
    assert load_config([], BASE_ENV).tls_dir is None
    assert load_config([], {**BASE_ENV, "TLS_DIR": "off"}).tls_dir is None
    assert load_config([], {**BASE_ENV, "TLS_DIR": "/etc/testbed/tls"}).tls_dir == Path(
        "/etc/testbed/tls"
    )
    assert load_config(["--tls-dir", "off"], {**BASE_ENV, "TLS_DIR": "/x"}).tls_dir is None


def test_a_tls_broker_asks_to_be_started_again_with_the_handshake_tracer() -> None:
    tls = load_config([], {**BASE_ENV, "TLS_DIR": "/etc/testbed/tls"})
    traced = trace_environment(tls, {"PATH": "/bin"})
    assert traced is not None
    assert traced["GRPC_TRACE"] == "handshaker"
    assert trace_environment(tls, traced) is None
    assert trace_environment(load_config([], BASE_ENV), {}) is None


def test_state_readers_by_default_need_more_than_two_cpus() -> None:
    assert [default_state_readers(cpus) for cpus in (1, 2, 3, 4, 64)] == [0, 0, 1, 2, 2]


def test_state_readers_help_from_5000_partitions_unless_set() -> None:
    default = load_config([], BASE_ENV)
    assert default.state_reader_processes == default_state_readers()
    assert default.state_reader_min_partitions == 5_000
    env = {**BASE_ENV, "STATE_READER_PROCESSES": "0"}
    assert load_config([], env).state_reader_processes == 0
    args = ["--state-reader-processes", "3", "--state-reader-min-partitions", "1"]
    chosen = load_config(args, env)
    assert (chosen.state_reader_processes, chosen.state_reader_min_partitions) == (3, 1)


def test_the_young_gc_threshold_is_50000_unless_set() -> None:
    assert load_config([], BASE_ENV).gc_young_threshold == 50_000
    env = {**BASE_ENV, "GC_YOUNG_THRESHOLD": "700"}
    assert load_config([], env).gc_young_threshold == 700
    assert load_config(["--gc-young-threshold", "1000"], env).gc_young_threshold == 1_000


def test_the_gil_switch_interval_is_a_millisecond_unless_set() -> None:
    assert load_config([], BASE_ENV).gil_switch_interval_us == 1_000
    env = {**BASE_ENV, "GIL_SWITCH_INTERVAL_US": "5000"}
    assert load_config([], env).gil_switch_interval_us == 5_000
    assert load_config(["--gil-switch-interval-us", "250"], env).gil_switch_interval_us == 250


def test_the_collector_pauses_during_changes_unless_told_not_to() -> None:
    assert load_config([], BASE_ENV).gc_pause_during_changes is True
    env = {**BASE_ENV, "GC_PAUSE_DURING_CHANGES": "false"}
    assert load_config([], env).gc_pause_during_changes is False
    args = ["--gc-pause-during-changes", "true"]
    assert load_config(args, env).gc_pause_during_changes is True


def _timings(config: BrokerConfig) -> tuple[int, ...]:
    return (
        config.zk_session_timeout_ms,
        config.zk_connection_timeout_ms,
        config.replica_lag_time_max_ms,
        config.controlled_shutdown_retry_backoff_ms,
        config.registration_stale_wait_ms,
    )


def test_without_a_profile_the_timings_are_kafkas() -> None:
    config = load_config([], BASE_ENV)
    assert config.profile == "kafka"
    # the connection timeout is unset in Kafka: the session timeout stands in
    assert _timings(config) == (18000, 18000, 30000, 5000, 0)
    assert (config.controlled_shutdown_max_retries, config.isr_change_blackout_ms) == (3, 5000)
    assert config.leader_imbalance_check_interval_s == 300


@pytest.mark.parametrize(
    ("argv", "env"),
    [
        pytest.param(["--profile", "fast"], BASE_ENV, id="flag"),
        pytest.param([], {**BASE_ENV, "TESTBED_PROFILE": "fast"}, id="environment"),
        pytest.param(
            ["--profile", "fast"], {**BASE_ENV, "TESTBED_PROFILE": "kafka"}, id="flag-over-env"
        ),
    ],
)
def test_the_fast_profile_gives_the_short_timings(argv: list[str], env: dict[str, str]) -> None:
    config = load_config(argv, env)
    assert config.profile == "fast"
    assert _timings(config) == (6000, 30000, 10000, 1000, 17000)


def test_a_value_set_explicitly_wins_over_the_profile() -> None:
    env = {**BASE_ENV, "TESTBED_PROFILE": "fast", "REPLICA_LAG_TIME_MAX_MS": "2500"}
    argv = ["--zk-session-timeout-ms", "3000", "--registration-stale-wait-ms", "0"]
    config = load_config(argv, env)
    assert _timings(config) == (3000, 30000, 2500, 1000, 0)
    kafka = load_config(["--controlled-shutdown-retry-backoff-ms", "1000"], BASE_ENV)
    assert _timings(kafka) == (18000, 18000, 30000, 1000, 0)


def test_an_unset_connection_timeout_follows_the_session_timeout_given() -> None:
    config = load_config(["--zk-session-timeout-ms", "9000"], BASE_ENV)
    assert (config.zk_session_timeout_ms, config.zk_connection_timeout_ms) == (9000, 9000)
    empty = load_config(
        [], {**BASE_ENV, "ZK_SESSION_TIMEOUT_MS": "7000", "ZK_CONNECTION_TIMEOUT_MS": ""}
    )
    assert empty.zk_connection_timeout_ms == 7000


def test_every_setting_of_the_profiles_is_an_option_with_no_default_of_its_own() -> None:
    """The profile, not the parser, gives these options their defaults: a parser default
    would hide whether a value was given explicitly."""
    parser = build_parser({})
    for item in SETTINGS:
        dest = item.flag.lstrip("-").replace("-", "_")
        assert dest in vars(parser.parse_args([])), item.flag
        assert parser.get_default(dest) is None, item.flag


def test_the_inter_broker_protocol_is_2_6_unless_told() -> None:
    """Leaders write their ISR changes by default (the seeds' path); `2.7` (from the
    environment or the command line) has them send AlterIsr."""
    assert load_config([], BASE_ENV).inter_broker_protocol == "2.6"
    env = {**BASE_ENV, "INTER_BROKER_PROTOCOL": "2.7"}
    assert load_config([], env).inter_broker_protocol == "2.7"
    argv = ["--inter-broker-protocol", " 2.6 "]
    assert load_config(argv, env).inter_broker_protocol == "2.6"
