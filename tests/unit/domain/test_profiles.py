"""`domain.profiles`: the `kafka` profile holds Kafka 2.8's defaults, `fast` the short
timings; a value given explicitly wins over the profile, an unset one falls back, and a
broker's environment resolves as the broker resolves it."""

from __future__ import annotations

import pytest

from domain.profiles import (
    DEFAULT_PROFILE,
    FAST,
    KAFKA,
    PROFILES,
    SETTINGS,
    ProfileError,
    check_profile,
    effective,
    env_name,
    resolve,
    setting,
)

SESSION = "--zk-session-timeout-ms"
CONNECTION = "--zk-connection-timeout-ms"
LAG = "--replica-lag-time-max-ms"
BACKOFF = "--controlled-shutdown-retry-backoff-ms"
STALE = "--registration-stale-wait-ms"
HW_CHECKPOINT = "--replica-high-watermark-checkpoint-interval-ms"


def test_kafka_is_the_default_and_holds_kafka_2_8s_values() -> None:
    assert DEFAULT_PROFILE == KAFKA == PROFILES[0]
    kafka = resolve(KAFKA, {})
    assert (kafka[SESSION], kafka[LAG], kafka[BACKOFF], kafka[STALE]) == (
        "18000",
        "30000",
        "5000",
        "0",
    )
    assert kafka["--leader-imbalance-check-interval-seconds"] == "300"
    assert kafka["--controlled-shutdown-max-retries"] == "3"
    assert kafka[HW_CHECKPOINT] == "5000"


def test_the_fast_profile_holds_the_short_timings() -> None:
    fast = resolve(FAST, {})
    assert (fast[SESSION], fast[CONNECTION], fast[LAG], fast[BACKOFF], fast[STALE]) == (
        "6000",
        "30000",
        "10000",
        "1000",
        "17000",
    )
    assert fast[HW_CHECKPOINT] == "1000"


@pytest.mark.parametrize("profile", PROFILES)
def test_every_setting_resolves_to_a_non_negative_integer(profile: str) -> None:
    values = resolve(profile, {})
    assert set(values) == {item.flag for item in SETTINGS}
    assert all(value is not None and int(value) >= 0 for value in values.values()), values


def test_a_value_given_explicitly_wins_and_an_empty_one_counts_as_not_given() -> None:
    values = resolve(FAST, {SESSION: "3000", LAG: "", BACKOFF: None})
    assert (values[SESSION], values[LAG], values[BACKOFF]) == ("3000", "10000", "1000")


def test_an_unset_connection_timeout_takes_the_effective_session_timeout() -> None:
    assert setting(CONNECTION).kafka is None
    assert resolve(KAFKA, {})[CONNECTION] == "18000"
    assert resolve(KAFKA, {SESSION: "4000"})[CONNECTION] == "4000"
    assert resolve(KAFKA, {SESSION: "4000", CONNECTION: "900"})[CONNECTION] == "900"


@pytest.mark.parametrize("name", ["slow", "FAST", "", "kafka "])
def test_an_unknown_profile_is_refused_naming_the_profiles(name: str) -> None:
    with pytest.raises(ProfileError, match="one of kafka, fast"):
        check_profile(name)
    with pytest.raises(ProfileError):
        resolve(name, {})


def test_a_flag_no_profile_sets_is_refused() -> None:
    with pytest.raises(ProfileError, match="--port"):
        setting("--port")


def test_the_environment_names_the_profile_and_the_values_that_win() -> None:
    assert env_name("--profile") == "TESTBED_PROFILE"
    assert env_name(LAG) == "REPLICA_LAG_TIME_MAX_MS"
    profile, values = effective({"TESTBED_PROFILE": "fast", "ZK_SESSION_TIMEOUT_MS": "3000"})
    assert (profile, values[SESSION], values[LAG]) == ("fast", "3000", "10000")
    # the compose file passes an unset session timeout as the empty string
    profile, values = effective({"TESTBED_PROFILE": "", "ZK_SESSION_TIMEOUT_MS": ""})
    assert (profile, values[SESSION], values[CONNECTION]) == ("kafka", "18000", "18000")
    with pytest.raises(ProfileError):
        effective({"TESTBED_PROFILE": "turbo"})
