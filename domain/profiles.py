"""Named sets of a broker's timing and size settings (`kafka`, `fast`), and how a setting's
effective value is chosen: one given explicitly (a command-line flag or its environment
variable) wins; else the profile's value; else the value of the setting it falls back to.

`kafka` is Kafka 2.8's defaults (`KafkaConfig`'s `Defaults`, and the constants of
`ZkIsrManager`, `KafkaServer` and `KafkaZkClient` where no config exists); a broker
started without a profile uses it. `fast` is the shorter timings the compose cluster, the
integration, docker and chaos tiers choose explicitly (`--profile fast`,
`TESTBED_PROFILE=fast`), so that sessions expire and followers leave the ISR in seconds.
The broker (`broker_node.config`) and the tools that record a cluster's settings
(`chaos.cluster.endpoints`) resolve values here, so both agree. Pure values and
functions; any thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

KAFKA = "kafka"
FAST = "fast"
#: Every profile, the default first.
PROFILES = (KAFKA, FAST)
DEFAULT_PROFILE = KAFKA
PROFILE_FLAG = "--profile"
#: The environment variable naming the profile (a broker option's variable is otherwise
#: its flag in upper snake case).
PROFILE_ENV = "TESTBED_PROFILE"


class ProfileError(ValueError):
    """A profile name that is not one of `PROFILES`, or a flag that is not a setting."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One broker option whose default a profile chooses."""

    #: The broker's command-line flag (`--zk-session-timeout-ms`).
    flag: str
    #: Kafka 2.8's name for it: a config name, or the constant it stands for.
    kafka_name: str
    #: Kafka 2.8's value, which is the broker's default; None: unset (see `fallback`).
    kafka: str | None
    #: The `fast` profile's value.
    fast: str | None
    #: The flag whose effective value this one takes while it has none of its own.
    fallback: str | None = None

    def value(self, profile: str) -> str | None:
        """This setting's value under `profile` (None: unset)."""
        return self.fast if check_profile(profile) == FAST else self.kafka


SETTINGS: tuple[Setting, ...] = (
    Setting("--zk-session-timeout-ms", "zookeeper.session.timeout.ms", "18000", "6000"),
    Setting(
        "--zk-connection-timeout-ms",
        "zookeeper.connection.timeout.ms",
        None,
        "30000",
        fallback="--zk-session-timeout-ms",
    ),
    Setting("--replica-lag-time-max-ms", "replica.lag.time.max.ms", "30000", "10000"),
    Setting("--isr-change-blackout-ms", "IsrChangePropagationConfig.lingerMs", "5000", "5000"),
    Setting(
        "--replica-high-watermark-checkpoint-interval-ms",
        "replica.high.watermark.checkpoint.interval.ms",
        "5000",
        "1000",
    ),
    Setting(
        "--max-incremental-fetch-session-cache-slots",
        "max.incremental.fetch.session.cache.slots",
        "1000",
        "1000",
    ),
    Setting(
        "--min-incremental-fetch-session-eviction-ms",
        "KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS",
        "120000",
        "120000",
    ),
    Setting("--controlled-shutdown-max-retries", "controlled.shutdown.max.retries", "3", "3"),
    Setting(
        "--controlled-shutdown-retry-backoff-ms",
        "controlled.shutdown.retry.backoff.ms",
        "5000",
        "1000",
    ),
    Setting(
        "--leader-imbalance-check-interval-seconds",
        "leader.imbalance.check.interval.seconds",
        "300",
        "300",
    ),
    Setting(
        "--leader-imbalance-per-broker-percentage",
        "leader.imbalance.per.broker.percentage",
        "10",
        "10",
    ),
    # twice the fast session timeout plus 5 s: a broker killed and started again at once
    # outwaits its previous process's registration
    Setting("--registration-stale-wait-ms", "KafkaZkClient.registerBroker", "0", "17000"),
)

_BY_FLAG = {setting.flag: setting for setting in SETTINGS}


def check_profile(name: str) -> str:
    """`name` if it is a profile; `ProfileError` naming the profiles otherwise."""
    if name not in PROFILES:
        raise ProfileError(f"unknown profile {name!r}; one of {', '.join(PROFILES)}")
    return name


def setting(flag: str) -> Setting:
    """The setting of `flag`; `ProfileError` when no profile sets it."""
    try:
        return _BY_FLAG[flag]
    except KeyError:
        raise ProfileError(f"{flag} is not a setting of the profiles") from None


def env_name(flag: str) -> str:
    """The environment variable of a broker option: `--zk-connect` -> `ZK_CONNECT`;
    `--profile` -> `TESTBED_PROFILE`."""
    if flag == PROFILE_FLAG:
        return PROFILE_ENV
    return flag.lstrip("-").replace("-", "_").upper()


def resolve(profile: str, explicit: Mapping[str, str | None]) -> dict[str, str | None]:
    """Flag -> effective value of every setting under `profile`: the value in `explicit`
    (flag -> value; None or "" means not given) where there is one, else the profile's,
    else its fallback's effective value (None: still unset)."""
    check_profile(profile)
    chosen: dict[str, str | None] = {}
    for item in SETTINGS:
        given = explicit.get(item.flag)
        chosen[item.flag] = given if given not in (None, "") else item.value(profile)
    for item in SETTINGS:
        if chosen[item.flag] is None and item.fallback is not None:
            chosen[item.flag] = chosen[item.fallback]
    return chosen


def effective(env: Mapping[str, str]) -> tuple[str, dict[str, str | None]]:
    """The profile a broker's environment names (`TESTBED_PROFILE`; the default when
    unset or empty) and the effective value of every setting under it, given by the
    settings' environment variables (`ProfileError` on an unknown profile). A flag on the
    broker's command line would win over both; the compose cluster gives none."""
    profile = env.get(PROFILE_ENV) or DEFAULT_PROFILE
    explicit = {item.flag: env.get(env_name(item.flag)) for item in SETTINGS}
    return profile, resolve(profile, explicit)
