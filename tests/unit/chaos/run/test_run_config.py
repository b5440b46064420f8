"""`config.json` of a chaos run records the brokers' timing profile and the effective value
of every setting a profile chooses, as the brokers resolve them from their environment,
their inter-broker protocol (which a run may insist on) and the invariants the schedule
is judged on (without the actions the run left out); readers of older run directories,
which lack them, still read them. A schedule with disk faults refuses a cluster whose
brokers are not behind their disk layers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import pytest

from chaos.cluster.handle import ClusterHandle
from chaos.faults import disk
from chaos.faults.testing import FakeCluster
from chaos.generator.scenarios import SCENARIOS
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step
from chaos.run.setup import (
    NeedsDiskLayers,
    RunSetupError,
    acknowledged_loss_allowed,
    check_disk_layers,
    check_flush_interval,
    check_inter_broker_protocol,
    judged_as_performed,
    run_config,
)
from domain.flush import NEVER_FLUSH
from pipeline.runs import RunConfig
from rundir.invariants.names import EVERY_RUN, REASSIGNMENT_COMPLETES
from rundir.rejudge import ACKNOWLEDGED_LOSS_ALLOWED, settings_of


class _Cluster:
    """Two brokers whose containers hold `env`."""

    project = "testbed-x"

    def __init__(self, env: list[str]) -> None:
        self._env = env

    def brokers(self) -> dict[int, str]:
        return {1: "broker1", 2: "broker2"}

    def inspect(self, service: str) -> Mapping[str, Any]:
        return {"Config": {"Hostname": service, "Env": self._env}}


def _config(env: list[str]) -> dict[str, Any]:
    scenario = SCENARIOS["broker-failure"]
    cluster = cast(ClusterHandle, _Cluster(env))
    return run_config(scenario, scenario.schedule(seed=3), False, cluster, "t-abc", 1000)


def test_the_fast_profile_and_an_explicit_session_timeout_are_recorded() -> None:
    config = _config(["TESTBED_PROFILE=fast", "ZK_SESSION_TIMEOUT_MS=3000", "BUG_SWITCHES="])
    assert config["profile"] == "fast"
    assert config["session_timeout_ms"] == 3000
    settings = config["broker_settings"]
    assert settings["zk-session-timeout-ms"] == 3000
    assert settings["replica-lag-time-max-ms"] == 10_000
    assert settings["controlled-shutdown-retry-backoff-ms"] == 1000
    assert settings["registration-stale-wait-ms"] == 17_000
    json.dumps(config)  # what the runner writes


def test_the_invariants_recorded_are_those_the_schedule_is_judged_on() -> None:
    scenario = SCENARIOS["random"]
    cluster = cast(ClusterHandle, _Cluster(["TESTBED_PROFILE=fast"]))
    for seed in range(6):
        schedule = scenario.schedule(seed)
        config = run_config(scenario, schedule, False, cluster, "t-abc", 1000)
        assert set(scenario.invariants_for(schedule)) <= set(config["invariants"])
        reassigns = any(a.kind in ("reassign", "vacate") for a in schedule.actions)
        assert ("reassignment_completes" in config["invariants"]) == reassigns


def test_a_broker_without_a_profile_is_recorded_with_kafkas_values() -> None:
    config = _config(["ZK_SESSION_TIMEOUT_MS="])
    assert config["profile"] == "kafka"
    assert config["session_timeout_ms"] == 18_000
    assert config["broker_settings"]["zk-connection-timeout-ms"] == 18_000


def test_a_profile_the_testbed_does_not_know_is_recorded_as_unknown() -> None:
    config = _config(["TESTBED_PROFILE=turbo"])
    assert (config["profile"], config["broker_settings"], config["session_timeout_ms"]) == (
        None,
        {},
        None,
    )


def test_an_older_config_without_the_profile_is_still_read(tmp_path: Path) -> None:
    config = _config(["TESTBED_PROFILE=fast"])
    for key in ("profile", "broker_settings", "session_timeout_ms"):
        del config[key]
    assert settings_of(config, tmp_path)["topics"] == ("t-abc",)
    assert RunConfig.from_json(tmp_path, config).topic == "t-abc"


def test_the_inter_broker_protocol_is_recorded_the_default_when_unset() -> None:
    assert _config(["INTER_BROKER_PROTOCOL=2.7"])["inter_broker_protocol"] == "2.7"
    assert _config([])["inter_broker_protocol"] == "2.6"


def test_a_run_refuses_a_cluster_on_another_inter_broker_protocol() -> None:
    cluster = cast(ClusterHandle, _Cluster(["INTER_BROKER_PROTOCOL=2.6"]))
    check_inter_broker_protocol(cluster, None)
    check_inter_broker_protocol(cluster, "2.6")
    with pytest.raises(RunSetupError, match=r"INTER_BROKER_PROTOCOL=2\.7"):
        check_inter_broker_protocol(cluster, "2.7")


def test_a_run_refuses_a_cluster_on_another_flush_interval() -> None:
    default = cast(ClusterHandle, _Cluster([]))
    check_flush_interval(default, None)
    check_flush_interval(default, NEVER_FLUSH)
    with pytest.raises(RunSetupError, match=r"LOG_FLUSH_INTERVAL_MESSAGES=1 .*make up FLUSH=1"):
        check_flush_interval(default, 1)
    every = cast(ClusterHandle, _Cluster(["LOG_FLUSH_INTERVAL_MESSAGES=1"]))
    check_flush_interval(every, 1)
    with pytest.raises(RunSetupError, match=r"\{'broker1': 1, 'broker2': 1\}"):
        check_flush_interval(every, NEVER_FLUSH)


def test_a_schedule_with_disk_faults_refuses_brokers_without_their_layers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = FakeCluster(project="testbed-x")
    handle = cast(ClusterHandle, cluster)
    layered = {"broker1", "broker2"}

    def mount_table(pid: int) -> str:
        service = next(s for s in cluster.services() if cluster.pid(s) == pid)
        if service not in layered:
            return "22 1 8:1 / / rw - overlay overlay rw\n"
        return (
            f"91 1 0:91 / /var/lib/testbed/data rw - fuse.testbed-disk "
            f"testbed-disk:testbed-x/{service} rw\n"
        )

    monkeypatch.setattr(disk, "mount_table", mount_table)
    check_disk_layers(handle, SCENARIOS["broker-failure"].schedule(1))
    with pytest.raises(NeedsDiskLayers, match=r"\(disk-eio\) .* broker3 of project testbed-x"):
        check_disk_layers(handle, SCENARIOS["disk-failure"].schedule(1))
    layered.add("broker3")
    check_disk_layers(handle, SCENARIOS["disk-failure"].schedule(1))


@pytest.mark.parametrize(
    ("scenario", "interval", "allowed"),
    [
        ("power-loss", 2**63 - 1, "power-loss under log-flush-interval-messages never"),
        ("power-loss", 100, "power-loss under log-flush-interval-messages 100"),
        ("power-loss", 1, None),
        ("broker-failure", 2**63 - 1, None),
    ],
)
def test_a_power_loss_allows_lost_writes_only_under_a_lazy_flush_policy(
    scenario: str, interval: int, allowed: str | None
) -> None:
    schedule = SCENARIOS[scenario].schedule(1)
    assert acknowledged_loss_allowed(schedule, interval) == allowed


def test_the_report_reads_a_power_losss_reason_as_the_check_does(tmp_path: Path) -> None:
    config = _config([]) | {ACKNOWLEDGED_LOSS_ALLOWED: "power-loss under x"}
    assert RunConfig.from_json(tmp_path, config).acknowledged_loss_allowed == "power-loss under x"
    assert settings_of(config, tmp_path)["acknowledged_loss_allowed"] == "power-loss under x"
    assert RunConfig.from_json(tmp_path, _config([])).acknowledged_loss_allowed is None


def test_an_action_left_out_takes_its_invariant_out_of_the_config_and_the_verdict() -> None:
    scenario = SCENARIOS["random"]
    retire = Action(10, "vacate", (("broker", "non-controller:2"),))
    grow = Action(12, "add-partitions", (("partitions", 4), ("topic", "chaos-random-side")))
    schedule = Schedule(
        1, (Step(5, 20, FaultSpec("kill", "non-controller:1")),), 30, 45, (retire, grow)
    )
    config: dict[str, Any] = {"invariants": ["unchanged"]}
    assert REASSIGNMENT_COMPLETES in judged_as_performed(scenario, schedule, [], config)
    assert config == {"invariants": ["unchanged"]}  # nothing left out: nothing rewritten
    judged = judged_as_performed(scenario, schedule, [retire], config)
    assert REASSIGNMENT_COMPLETES not in judged
    assert REASSIGNMENT_COMPLETES not in config["invariants"]
    assert set(config["invariants"]) == judged | set(EVERY_RUN)
    assert config["left_out_actions"] == [
        {"at_s": 10.0, "kind": "vacate", "params": {"broker": "non-controller:2"}}
    ]
