"""A chaos run: one scenario's schedule performed on a running compose project while the
workload runs, then judged by the cluster invariants. `run` is what `python -m chaos run`,
`replay` and `shrink` call.

Order (docs/chaos.md, "A run"):

1. Check that every service of the project runs and a controller is elected.
2. Write `config.json` and `schedule.json` (`chaos.run_dir`), then create the run's own
   topic (the scenario's name plus the run's suffix, so runs never share a log) and wait
   until every partition is led with its full ISR and every broker's metadata agrees.
3. Start the metrics scraper and the workload (`chaos.workload_run`) in the background.
4. Perform the schedule's cues on time (`chaos.timeline`): faults through the injector
   (`chaos.injector`: recorded, proven, undone and verified), actions, the heal.
5. After the heal, take a snapshot of the cluster every `SNAPSHOT_EVERY_S` until it has
   converged and the workload ended, or the scenario's bound ran out.
6. Copy every node's event log into the run, judge (`chaos.invariants`), write
   `verdict.json`, print the verdict table.

Ctrl-C or any failure still heals every fault (the injector's `with` block) and stops the
workload and the scraper; `python -m chaos heal` finishes the job if the runner itself is
killed. Threads: the caller's thread performs the schedule; `chaos-workload` runs the
workload, `chaos-metrics-scraper` the scraper.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import random
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chaos import endpoints
from chaos.actions import ActionFailed, perform
from chaos.cluster import ClusterHandle
from chaos.faults.base import FaultError
from chaos.faults.catalog import fault_from_json
from chaos.injector import Injector
from chaos.invariants import ClusterSnapshot, RunVerdict, judge, problems, time_to_convergence
from chaos.invariants.names import CONVERGES_AFTER_HEAL
from chaos.invariants.run_dir import load_run, write_verdict
from chaos.live import LiveView, RunStatus, rates_between
from chaos.metrics_scrape import MetricsScraper, parse_metrics
from chaos.run_dir import RUN_DIR_VERSION, RunDir, new_run_id
from chaos.scenarios import Scenario
from chaos.schedule import Schedule, Step, write_schedule
from chaos.snapshots import ACTIVE_CONTROLLER, take_snapshot
from chaos.timeline import CueType, timeline
from chaos.workload_run import Progress, WorkloadResult, run_workload
from client import Client
from eventlog.jsonlines import JsonLinesWriter
from testbed.topics import create_topic
from zkdata.client import KafkaZkClient

#: Seconds between cluster snapshots after the heal, and between live-view updates.
SNAPSHOT_EVERY_S = 1.0
TICK_S = 0.25
#: Deadlines of the set-up steps.
READY_TIMEOUT_S = 90.0


class RunSetupError(Exception):
    """The run could not start: the project is not up, no controller, the topic failed."""


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What to run: `scenario` with `seed` (or `schedule`, a replay) on compose `project`,
    into a new directory under `runs_root`."""

    scenario: Scenario
    seed: int | None
    project: str
    runs_root: Path
    schedule: Schedule | None = None
    force_plain: bool = False


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """A finished run: its directory, its verdict and the recovery time after the heal."""

    run_dir: Path
    verdict: RunVerdict
    recovery_s: float | None
    faults: int

    @property
    def ok(self) -> bool:
        """No invariant is violated."""
        return self.verdict.ok


def run(request: RunRequest) -> RunOutcome:
    """Perform the run (see the module docstring). Raises `RunSetupError` before anything
    was done to the cluster when it is not ready."""
    scenario = request.scenario
    schedule = request.schedule or scenario.schedule(request.seed)
    with ClusterHandle.for_project(request.project) as cluster:
        _check_ready(cluster)
        run_dir = RunDir(request.runs_root / new_run_id(scenario.name, schedule.seed)).create()
        topic = f"{scenario.workload.topic}-{secrets.token_hex(3)}"
        started_ms = int(time.time() * 1000)
        run_dir.write_json(run_dir.config, _config(request, schedule, cluster, topic, started_ms))
        write_schedule(run_dir.schedule, schedule)
        with LiveView(force_plain=request.force_plain) as view:
            view.say(f"run {run_dir.run_id}: {scenario.name}, topic {topic}, in {run_dir.root}")
            _create_topic(cluster, scenario, topic)
            view.say(f"topic {topic} is led with its full ISR on every broker")
            performed = _Performance(request, schedule, cluster, run_dir, topic, view)
            performed.go()
        recovery = time_to_convergence(performed.snapshots)
        nodes = run_dir.copy_events(performed.event_dir) if performed.event_dir else []
        inputs = load_run(
            run_dir.root,
            unclean_leader_election=scenario.workload.unclean_leader_election,
            convergence_bound_ms=int(scenario.convergence_s * 1000),
            also=scenario.invariants & _SCENARIO_CHECKS,
            since_ms=started_ms,
            topics=(topic,),
        )
        verdict = judge(inputs)
        verdict = _only(verdict, scenario.invariants)
        write_verdict(run_dir.root, verdict)
        _append_summary(run_dir, scenario, schedule, verdict, recovery, nodes, performed)
        return RunOutcome(
            run_dir.root,
            verdict,
            None if recovery is None else recovery / 1000,
            len(schedule.steps),
        )


def _only(verdict: RunVerdict, wanted: frozenset[str]) -> RunVerdict:
    """The verdict restricted to the scenario's invariants (in judge's order)."""
    return RunVerdict(tuple(r for r in verdict.results if r.name in wanted))


def _check_ready(cluster: ClusterHandle) -> None:
    """Every service runs, and within `READY_TIMEOUT_S` every broker is registered and a
    controller is elected (a previous run's restarted broker may still be registering)."""
    services = cluster.services()
    if not services:
        raise RunSetupError(f"compose project {cluster.project} has no containers; `make up` first")
    down = [s for s in services if cluster.status(s) != "running"]
    if down:
        raise RunSetupError(
            f"services not running: {', '.join(down)}; `python -m chaos heal` or `make up`"
        )
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        try:
            unregistered = [b for b in cluster.brokers() if not cluster.broker_registered(b)]
            controller = cluster.controller_id()
        except FaultError as exc:
            raise RunSetupError(f"ZooKeeper of {cluster.project} is not reachable: {exc}") from exc
        if not unregistered and controller is not None:
            return
        if time.monotonic() > deadline:
            raise RunSetupError(
                f"after {READY_TIMEOUT_S:.0f} s: brokers {unregistered} not registered, "
                f"controller {controller}"
            )
        time.sleep(SNAPSHOT_EVERY_S)


def _config(
    request: RunRequest, schedule: Schedule, cluster: ClusterHandle, topic: str, started_ms: int
) -> dict[str, Any]:
    workload = dataclasses.asdict(request.scenario.workload)
    return {
        "run_dir_version": RUN_DIR_VERSION,
        "scenario": request.scenario.name,
        "seed": schedule.seed,
        "replay": request.schedule is not None,
        "project": cluster.project,
        "topic": topic,
        "workload": workload,
        "invariants": sorted(request.scenario.invariants),
        "convergence_bound_s": request.scenario.convergence_s,
        "session_timeout_ms": endpoints.session_timeout_ms(cluster),
        "started_ms": started_ms,
        "versions": {"python": platform.python_version(), "host": platform.platform(terse=True)},
    }


def _create_topic(cluster: ClusterHandle, scenario: Scenario, topic: str) -> None:
    w = scenario.workload
    config = {
        "min.insync.replicas": str(w.min_insync_replicas),
        "unclean.leader.election.enable": str(w.unclean_leader_election).lower(),
    }
    try:
        cluster.read_zk(
            lambda zk: create_topic(zk, topic, w.partitions, w.replication_factor, config=config)
        )
    except Exception as exc:  # admin errors, ZooKeeper errors: the run cannot start
        raise RunSetupError(f"creating topic {topic}: {exc}") from exc
    with _client(cluster, topic) as client:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            snapshot = _snapshot(cluster, client, topic, 0)
            if not problems(snapshot):
                return
            if time.monotonic() > deadline:
                raise RunSetupError(f"topic {topic} not ready: {'; '.join(problems(snapshot))}")
            time.sleep(SNAPSHOT_EVERY_S)


def _client(cluster: ClusterHandle, topic: str) -> Client:
    addresses = endpoints.broker_addresses(cluster)
    return Client(
        [addresses[b] for b in sorted(addresses)],
        topics=(topic,),
        address_map=endpoints.advertised_map(cluster),
        timeout_s=5.0,
    )


def _snapshot(cluster: ClusterHandle, client: Client, topic: str, after_ms: int) -> ClusterSnapshot:
    addresses = endpoints.broker_addresses(cluster)
    apis = {b: client.api(a) for b, a in addresses.items()}
    urls = endpoints.metrics_urls(cluster)
    services = cluster.brokers()

    def active(broker: int) -> float | None:
        url = urls.get(services.get(broker, ""))
        if url is None:
            return None
        try:
            import urllib.request

            with urllib.request.urlopen(url, timeout=2) as reply:
                text = reply.read().decode("utf-8", errors="replace")
            return parse_metrics(text).get(ACTIVE_CONTROLLER)
        except OSError:
            return None

    return cluster.read_zk(lambda zk: take_snapshot(zk, (topic,), apis, after_ms, active))


_SCENARIO_CHECKS = frozenset(
    {"no_offline_partitions", "paused_controller_resigns", "reassignment_completes"}
)


class _Performance:
    """Steps 3-5 of the module docstring, on the caller's thread."""

    def __init__(
        self,
        request: RunRequest,
        schedule: Schedule,
        cluster: ClusterHandle,
        run_dir: RunDir,
        topic: str,
        view: LiveView,
    ) -> None:
        self.request = request
        self.schedule = schedule
        self.cluster = cluster
        self.run_dir = run_dir
        self.topic = topic
        self.view = view
        self.snapshots: list[ClusterSnapshot] = []
        self.fault_ids: dict[int, str] = {}
        self.failed_steps: list[str] = []
        self.event_dir = endpoints.event_dir(cluster)
        self.workload: WorkloadResult | None = None
        self.workload_error: str | None = None
        self._progress: Progress | None = None
        self._rates: dict[str, float] = {}
        self._controller: tuple[float, int | None, int | None] = (0.0, None, None)
        self._stop = threading.Event()

    def go(self) -> None:
        """Run the workload, the schedule and the convergence watch; heal on any exit."""
        scraper = MetricsScraper(self.run_dir.metrics, lambda: endpoints.metrics_urls(self.cluster))
        client = _client(self.cluster, self.topic)
        config = dataclasses.replace(
            self.request.scenario.workload.config(),
            topic=self.topic,
            duration_s=self.schedule.end_s,
            progress_interval_s=1.0,
        )
        worker = threading.Thread(
            target=self._work, args=(client, config), name="chaos-workload", daemon=True
        )
        started = time.monotonic()
        scraper.start()
        worker.start()
        try:
            with Injector(self.cluster, self.run_dir.root) as injector:
                self._perform(injector, started)
            self._converge(started, worker)
        finally:
            self._stop.set()
            worker.join()
            scraper.stop()
            client.close()
        if self.workload_error:
            self.view.say(f"workload failed: {self.workload_error}")

    def _work(self, client: Client, config: Any) -> None:
        try:
            self.workload = run_workload(
                client, config, self.run_dir.history, self._stop, self._on_progress
            )
        except Exception as exc:  # reported in the summary; the invariants judge what exists
            self.workload_error = f"{type(exc).__name__}: {exc}"

    def _on_progress(self, progress: Progress) -> None:
        before = self._progress
        if before is not None:
            self._rates = rates_between(
                before.counts, before.elapsed_s, progress.counts, progress.elapsed_s
            )
        self._progress = progress

    def _controller_now(self) -> tuple[int | None, int | None]:
        """The controller and its epoch, read from ZooKeeper at most once a second."""
        read_at, controller, epoch = self._controller
        if time.monotonic() - read_at >= 1.0:

            def read(zk: KafkaZkClient) -> tuple[int | None, int | None]:
                found = zk.get_controller_epoch()
                return zk.get_controller_id(), None if found is None else found.epoch

            try:
                controller, epoch = self.cluster.read_zk(read)
            except FaultError:
                controller, epoch = None, None
            self._controller = (time.monotonic(), controller, epoch)
        return controller, epoch

    def _status(self, started: float, phase: str, injector: Injector | None) -> RunStatus:
        counts = dict(self._progress.counts) if self._progress else {}
        active = []
        if injector is not None:
            active = [f"{f.kind} {','.join(f.targets)}" for f in injector.active().values()]
        controller, epoch = self._controller_now()
        return RunStatus(
            self.request.scenario.name,
            self.schedule.seed,
            time.monotonic() - started,
            self.schedule.end_s,
            phase,
            tuple(active),
            counts,
            self._rates,
            controller,
            epoch,
        )

    def _wait_until(self, at: float, started: float, phase: str, injector: Injector) -> None:
        while True:
            left = started + at - time.monotonic()
            if left <= 0:
                return
            self.view.update(self._status(started, phase, injector))
            self._stop.wait(min(TICK_S, left))

    def _perform(self, injector: Injector, started: float) -> None:
        for cue in timeline(self.schedule):
            phase = "healing" if cue.type in (CueType.HEAL, CueType.END) else "faults"
            self._wait_until(cue.at_s, started, phase, injector)
            if cue.type is CueType.START and cue.index is not None:
                self._start(injector, cue.index, self.schedule.steps[cue.index])
            elif cue.type is CueType.STOP and cue.index is not None:
                self._stop_step(injector, cue.index)
            elif cue.type is CueType.ACTION and cue.index is not None:
                self._act(self.schedule.actions[cue.index])
            elif cue.type is CueType.HEAL:
                for healed in injector.heal_all():
                    self.view.say(f"heal {healed.fault_id}: {healed.check.detail}")
                self.heal_at = time.monotonic()
                self.view.say(f"{cue.at_s:6.1f}s heal: every fault undone")
                return

    def _start(self, injector: Injector, index: int, step: Step) -> None:
        spec = step.fault
        rng = random.Random(f"{self.schedule.seed}:{step.at_s}:{spec.kind}:{spec.target}")
        try:
            targets = self.cluster.resolve(spec.target, rng)
            fault = fault_from_json(spec.kind, {"targets": list(targets), **dict(spec.params)})
            done = injector.start(fault, fault_id=f"step-{index}")
        except FaultError as exc:
            self.failed_steps.append(f"step {index} ({spec.describe()}): {exc}")
            self.view.say(f"{step.at_s:6.1f}s {spec.kind} {spec.target}: NOT STARTED: {exc}")
            return
        self.view.say(
            f"{step.at_s:6.1f}s {spec.kind} {','.join(targets)}: "
            + ("in effect" if done.ok else "DID NOT TAKE EFFECT")
            + f" ({done.check.detail})"
        )
        if not done.ok:
            self.failed_steps.append(f"step {index} ({spec.describe()}): {done.check.detail}")
            return
        self.fault_ids[index] = done.fault_id
        if step.duration_s == 0:
            self._stop_step(injector, index)

    def _stop_step(self, injector: Injector, index: int) -> None:
        fault_id = self.fault_ids.pop(index, None)
        if fault_id is None:
            return
        undone = injector.stop(fault_id)
        if not undone.ok:
            self.failed_steps.append(f"step {index} undo: {undone.check.detail}")
        self.view.say(f"       undo {fault_id}: {'done' if undone.ok else 'FAILED'}")

    def _act(self, action: Any) -> None:
        try:
            said = perform(
                action, self.cluster.read_zk, {self.request.scenario.workload.topic: self.topic}
            )
        except (ActionFailed, FaultError) as exc:
            self.failed_steps.append(f"action {action.kind}: {exc}")
            said = f"FAILED: {exc}"
        self.view.say(f"{action.at_s:6.1f}s {action.kind}: {said}")

    def _converge(self, started: float, worker: threading.Thread) -> None:
        """Snapshots after the heal until converged and the workload is over, or the
        scenario's bound (counted from the heal) has passed."""
        heal = getattr(self, "heal_at", time.monotonic())
        bound = heal + self.request.scenario.convergence_s
        writer = JsonLinesWriter(self.run_dir.snapshots)
        converged = False
        with _client(self.cluster, self.topic) as client:
            try:
                while True:
                    now = time.monotonic()
                    if not converged or now < bound:
                        after = int((now - heal) * 1000)
                        try:
                            snap = _snapshot(self.cluster, client, self.topic, after)
                        except FaultError as exc:
                            self.view.say(f"snapshot failed: {exc}")
                        else:
                            self.snapshots.append(snap)
                            writer.append(json.dumps(snap.to_json(), separators=(",", ":")))
                            if not converged and not problems(snap):
                                converged = True
                                self.view.say(f"converged {after / 1000:.1f} s after the heal")
                    if (converged or now >= bound) and not worker.is_alive():
                        return
                    phase = "reading" if converged else "converging"
                    self.view.update(self._status(started, phase, None))
                    worker.join(SNAPSHOT_EVERY_S)
            finally:
                writer.close()


def _append_summary(
    run_dir: RunDir,
    scenario: Scenario,
    schedule: Schedule,
    verdict: RunVerdict,
    recovery_ms: int | None,
    nodes: list[str],
    performed: _Performance,
) -> None:
    """Add the run's summary to verdict.json: scenario, seed, recovery, what went wrong."""
    document = run_dir.read_json(run_dir.verdict)
    workload = performed.workload
    document.update(
        scenario=scenario.name,
        seed=schedule.seed,
        run_id=run_dir.run_id,
        faults=len(schedule.steps),
        recovery_s=None if recovery_ms is None else recovery_ms / 1000,
        convergence_bound_s=scenario.convergence_s,
        event_logs=nodes,
        failed_steps=performed.failed_steps,
        workload_counts=dict(workload.counts) if workload else {},
        workload_error=performed.workload_error,
    )
    run_dir.write_json(run_dir.verdict, document)


#: For the CLI: the invariant whose result carries the recovery time.
RECOVERY_INVARIANT = CONVERGES_AFTER_HEAL
#: A callable type the CLI passes around for progress lines.
Say = Callable[[str], None]
