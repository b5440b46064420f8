"""Setting a chaos run up on a compose project (`chaos.run.runner`'s steps 1-2) and reaching
the cluster during it: the readiness check, `config.json`, the run's topic, the workload's
client and cluster snapshots. Runner's thread.
"""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Sequence
from typing import Any

from admin import AdminError
from admin.topics import create_topic
from chaos.cluster import endpoints
from chaos.cluster.handle import ClusterHandle
from chaos.cluster.leftovers import Leftovers, find_leftovers
from chaos.cluster.metrics_scrape import fetch_metrics, parse_metrics
from chaos.cluster.snapshots import ACTIVE_CONTROLLER, take_snapshot
from chaos.errors import ChaosError, FaultError
from chaos.faults.disk import DISK_KINDS, behind_layer
from chaos.faults.power import DiskVolatile, PowerLoss
from chaos.generator.scenarios import Scenario
from chaos.generator.schedule import Action, Schedule
from client import Client
from domain.flush import FLUSH_INTERVAL_SETTING, NEVER_FLUSH, flushes_every_message
from harness.waiting import wait_until
from rundir.host_time import CLOCK_KEY, ClockAnchor
from rundir.invariants import ClusterSnapshot, problems
from rundir.invariants.names import EVERY_RUN
from rundir.layout import RUN_DIR_VERSION
from rundir.rejudge import ACKNOWLEDGED_LOSS_ALLOWED
from security.tls_files import CLIENT, FollowedIdentity
from zkdata.errors import ZkDataError

POWER_LOSS = PowerLoss.KIND

#: Seconds between readiness polls; the deadline of the set-up steps.
POLL_S = 1.0
READY_TIMEOUT_S = 90.0
#: How long an earlier run's admin work may take to finish before a run starts.
LEFTOVER_TIMEOUT_S = 60.0


class RunSetupError(ChaosError):
    """The run could not start: the project is not up, no controller, the topic failed."""


class LeftoverWork(RunSetupError):
    """An earlier run's reassignment, deletion or election is still in flight."""

    def __init__(self, message: str, leftovers: Leftovers) -> None:
        super().__init__(message)
        self.leftovers = leftovers


class NeedsDiskLayers(RunSetupError):
    """The schedule has disk faults and the project's brokers run without disk layers."""


def check_ready(cluster: ClusterHandle) -> None:
    """Every service runs, within `READY_TIMEOUT_S` every broker is registered and a
    controller is elected (a previous run's restarted broker may still be registering),
    and then no earlier run's admin work is in flight (`check_no_leftovers`)."""
    services = cluster.services()
    if not services:
        raise RunSetupError(f"compose project {cluster.project} has no containers; `make up` first")
    down = [s for s in services if cluster.status(s) != "running"]
    if down:
        raise RunSetupError(
            f"services not running: {', '.join(down)}; `python -m chaos heal` or `make up`"
        )
    seen: dict[str, object] = {}

    def settled() -> bool:
        seen["unregistered"] = [b for b in cluster.brokers() if not cluster.broker_registered(b)]
        seen["controller"] = cluster.controller_id()
        return not seen["unregistered"] and seen["controller"] is not None

    try:
        wait_until(
            settled,
            READY_TIMEOUT_S,
            lambda: (
                f"after {READY_TIMEOUT_S:.0f} s: brokers {seen['unregistered']} not "
                f"registered, controller {seen['controller']}"
            ),
            interval=POLL_S,
        )
    except FaultError as exc:
        raise RunSetupError(f"ZooKeeper of {cluster.project} is not reachable: {exc}") from exc
    except TimeoutError as exc:
        raise RunSetupError(str(exc)) from None
    check_no_leftovers(cluster)


def check_no_leftovers(cluster: ClusterHandle, timeout_s: float = LEFTOVER_TIMEOUT_S) -> None:
    """No earlier run's admin work is in flight (`chaos.cluster.leftovers`), waiting up to
    `timeout_s` for it to finish (the previous run's topic is usually still being
    deleted); `LeftoverWork` naming it when it does not."""
    seen = [Leftovers()]

    def drained() -> bool:
        seen[0] = cluster.read_zk(find_leftovers)
        return not seen[0]

    try:
        wait_until(drained, timeout_s, lambda: "", interval=POLL_S)
    except FaultError as exc:
        raise RunSetupError(f"ZooKeeper of {cluster.project} is not reachable: {exc}") from exc
    except TimeoutError:
        raise LeftoverWork(
            f"an earlier run's admin work is still in flight after {timeout_s:.0f} s: "
            f"{seen[0].describe()}; wait for it, or start the cluster afresh "
            f"(`make down` then `make up`)",
            seen[0],
        ) from None


def check_inter_broker_protocol(cluster: ClusterHandle, wanted: str | None) -> None:
    """Every broker runs inter-broker protocol `wanted` (None: any): ISR changes take the
    path the run asks for (`domain.protocols`)."""
    if wanted is None:
        return
    other = {s: v for s, v in endpoints.inter_broker_protocols(cluster).items() if v != wanted}
    if other:
        raise RunSetupError(
            f"the run asks for inter-broker protocol {wanted}, but {other} of project "
            f"{cluster.project} run another; recreate the cluster with "
            f"INTER_BROKER_PROTOCOL={wanted} (`make down` then `make up IBP={wanted}`)"
        )


def check_flush_interval(cluster: ClusterHandle, wanted: int | None) -> None:
    """Every broker runs flush interval `wanted` (None: any; `domain.flush`): a power
    loss takes what the run asks it to be able to take."""
    if wanted is None:
        return
    other: dict[str, int | None] = {}
    for service in sorted(cluster.brokers().values()):
        found = endpoints.settings_of(cluster.inspect(service))
        interval = None if found is None else found[1].get(FLUSH_INTERVAL_SETTING)
        if interval != wanted:
            other[service] = interval
    if other:
        raise RunSetupError(
            f"the run asks for {FLUSH_INTERVAL_SETTING} {wanted}, but {other} of project "
            f"{cluster.project} run another; recreate the cluster with "
            f"LOG_FLUSH_INTERVAL_MESSAGES={wanted} (`make down` then `make up FLUSH={wanted}`)"
        )


#: The fault kinds that act through the brokers' disk layers.
_LAYER_KINDS = DISK_KINDS | {DiskVolatile.KIND, PowerLoss.KIND}


def check_disk_layers(cluster: ClusterHandle, schedule: Schedule) -> None:
    """A schedule with disk faults needs every broker's log directory behind its layer:
    the layers are mounted before the containers start, so a run cannot add them."""
    kinds = sorted({step.fault.kind for step in schedule.steps} & _LAYER_KINDS)
    if not kinds:
        return
    plain = [s for s in cluster.brokers().values() if not behind_layer(cluster, s)]
    if plain:
        raise NeedsDiskLayers(
            f"the schedule's disk faults ({', '.join(kinds)}) act through disk layers, and "
            f"the log directories of {', '.join(sorted(plain))} of project "
            f"{cluster.project} are behind none; start the cluster with them (`make down`, "
            f"then `make up DISK_LAYER=1`; docs/chaos.md, Disk faults)"
        )


def acknowledged_loss_allowed(schedule: Schedule, flush_interval: int | None) -> str | None:
    """Why the run may lose acknowledged writes without failing, or None: a power loss
    while the brokers do not fsync every message before it counts (Kafka's durability
    model relies on replication, which a power loss of most replicas defeats)."""
    cut = any(step.fault.kind == POWER_LOSS for step in schedule.steps)
    if not cut or flushes_every_message(flush_interval):
        return None
    shown = "never" if flush_interval in (None, NEVER_FLUSH) else flush_interval
    return f"{POWER_LOSS} under {FLUSH_INTERVAL_SETTING} {shown}"


def run_config(
    scenario: Scenario,
    schedule: Schedule,
    replay: bool,
    cluster: ClusterHandle,
    topic: str,
    started_ms: int,
) -> dict[str, Any]:
    """What `config.json` holds (docs/runs.md)."""
    workload = dataclasses.asdict(scenario.workload)
    switches = endpoints.bug_switches(cluster)
    profile, settings = endpoints.broker_settings(cluster) or (None, {})
    protocols = endpoints.inter_broker_protocols(cluster)
    loss = acknowledged_loss_allowed(schedule, settings.get(FLUSH_INTERVAL_SETTING))
    return {
        "run_dir_version": RUN_DIR_VERSION,
        "scenario": scenario.name,
        "seed": schedule.seed,
        "replay": replay,
        "project": cluster.project,
        "topic": topic,
        "workload": workload,
        "invariants": sorted(scenario.invariants_for(schedule) | frozenset(EVERY_RUN)),
        "convergence_bound_s": scenario.convergence_s,
        "session_timeout_ms": settings.get(endpoints.SESSION_TIMEOUT),
        "profile": profile,
        "broker_settings": settings,
        ACKNOWLEDGED_LOSS_ALLOWED: loss,
        "inter_broker_protocol": ",".join(sorted(set(protocols.values()))),
        "bug_switches": list(endpoints.switches_on(switches)),
        "bug_switches_by_broker": {service: list(names) for service, names in switches.items()},
        "started_ms": started_ms,
        CLOCK_KEY: ClockAnchor.now().to_json(),
        "versions": {"python": platform.python_version(), "host": platform.platform(terse=True)},
    }


def create_run_topic(cluster: ClusterHandle, scenario: Scenario, topic: str) -> None:
    """Create the run's topic with the scenario's settings and wait until every partition
    is led with its full ISR and every broker's metadata agrees (`RunSetupError` else)."""
    w = scenario.workload
    config = {
        "min.insync.replicas": str(w.min_insync_replicas),
        "unclean.leader.election.enable": str(w.unclean_leader_election).lower(),
    }
    try:
        cluster.read_zk(
            lambda zk: create_topic(zk, topic, w.partitions, w.replication_factor, config=config)
        )
    except (FaultError, AdminError, ZkDataError, ValueError) as exc:  # cannot start
        raise RunSetupError(f"creating topic {topic}: {exc}") from exc
    left: list[str] = []

    def ready() -> bool:
        left[:] = problems(snapshot(cluster, client, topic, 0))
        return not left

    def message() -> str:
        return f"topic {topic} not ready: {'; '.join(left)}"

    with run_client(cluster, topic) as client:
        try:
            wait_until(ready, READY_TIMEOUT_S, message, POLL_S)
        except TimeoutError as exc:
            raise RunSetupError(str(exc)) from None


def run_client(cluster: ClusterHandle, topic: str) -> Client:
    """A client of the project's brokers on their published ports, asking about `topic`;
    mutual TLS with the project's client certificate when its brokers were given one,
    read again whenever its files change (a `cert-rotation` replaces them under the run)."""
    addresses = endpoints.broker_addresses(cluster)
    tls_dir = endpoints.tls_dir(cluster)
    return Client(
        [addresses[b] for b in sorted(addresses)],
        topics=(topic,),
        address_map=endpoints.advertised_map(cluster),
        timeout_s=5.0,
        tls_source=FollowedIdentity(tls_dir, CLIENT).current if tls_dir is not None else None,
    )


def snapshot(cluster: ClusterHandle, client: Client, topic: str, after_ms: int) -> ClusterSnapshot:
    """The cluster now (`chaos.cluster.snapshots.take_snapshot`), `after_ms` after the heal."""
    addresses = endpoints.broker_addresses(cluster)
    apis = {b: client.api(a) for b, a in addresses.items()}
    urls = endpoints.metrics_urls(cluster)
    services = cluster.brokers()

    def active(broker: int) -> float | None:
        url = urls.get(services.get(broker, ""))
        if url is None:
            return None
        try:
            return parse_metrics(fetch_metrics(url)).get(ACTIVE_CONTROLLER)
        except OSError:
            return None

    return cluster.read_zk(lambda zk: take_snapshot(zk, (topic,), apis, after_ms, active))


def judged_as_performed(
    scenario: Scenario,
    schedule: Schedule,
    left_out: Sequence[Action],
    config: dict[str, Any],
) -> frozenset[str]:
    """The invariants the run is judged on: the scenario's for `schedule` without the
    actions the step loop left out (`chaos.run.left_out.spared`), so that an invariant
    whose premise is one of them (a retirement for `reassignment_completes`) is not
    judged. With any left out, `config` (the run's `config.json`) is brought in line:
    its `invariants`, and the actions in `left_out_actions`."""
    if not left_out:
        return scenario.invariants_for(schedule)
    kept = tuple(a for a in schedule.actions if a not in left_out)
    judged = scenario.invariants_for(dataclasses.replace(schedule, actions=kept))
    config["invariants"] = sorted(judged | frozenset(EVERY_RUN))
    config["left_out_actions"] = [
        {"at_s": a.at_s, "kind": a.kind, "params": dict(a.params)} for a in left_out
    ]
    return judged
