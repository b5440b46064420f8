"""A chaos run: one scenario's schedule performed on a running compose project while the
workload runs, then judged by the cluster invariants. `run` is what `python -m chaos run`,
`replay` and `shrink` call.

Order (docs/chaos.md, "A run"):

1. Check that every service runs, a controller is elected, no earlier run's admin work is
   in flight, and for disk faults that every broker's log directory is behind its layer.
2. Write `config.json` and `schedule.json` (`rundir.layout`), then create the run's own
   topic (the scenario's name plus the run's suffix, so runs never share a log; at the
   schedule's replication when it sets one, `Scenario.for_schedule`) and wait until every
   partition is led with its full ISR and every broker's metadata agrees.
3. Start the metrics scraper and the workload (`chaos.client.workload_run`) in the background.
4. Perform the schedule's cues on time (`chaos.run.step_loop`): faults through the injector
   (`chaos.run.injector`: recorded, proven, undone and verified), actions, the heal (and
   a node that exited on its own started again, `chaos.run.supervisor`). A triggered step
   starts when its event appears in a node's event log (`chaos.run.event_watch`).
5. After the heal, take a snapshot of the cluster every `SNAPSHOT_EVERY_S` until it has
   converged and the workload ended, or the scenario's bound ran out; then audit the
   replicas of the run's topic into `audit.json` (`chaos.run.audit`).
6. Copy every node's event log into the run, judge (`rundir.invariants`), write
   `verdict.json` and `coverage.json` (`rundir.coverage`), print the verdict table, and
   hand the run's topic to the controller for deletion (unless `keep_topic`), so runs do
   not pile partitions up on the cluster.

Ctrl-C or any failure still heals every fault (the injector's `with` block) and stops the
workload and the scraper; `python -m chaos heal` finishes the job if the runner itself is
killed. Threads: the caller's thread performs the schedule; `chaos-workload` runs the
workload, `chaos-metrics-scraper` the scraper, `chaos-controller-watch` reads the
controller for the live view. The step loop itself never waits on ZooKeeper
(`chaos.cluster.zk_off_loop`): the view shows the watch's last answer, and a read a step needs
(resolving a role, an action) gives up after `STEP_READ_S`, so a schedule that takes
ZooKeeper's quorum away always reaches the step that gives it back.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import secrets
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from admin.topics import delete_topic
from chaos.client.workload_run import Progress, WorkloadConfig, WorkloadResult, run_workload
from chaos.cluster import endpoints
from chaos.cluster.handle import ClusterHandle
from chaos.cluster.metrics_scrape import MetricsScraper
from chaos.cluster.zk_off_loop import ControllerSeen, ControllerWatch
from chaos.errors import FaultError
from chaos.generator.scenarios import Scenario
from chaos.generator.schedule import Action, Schedule, write_schedule
from chaos.run.audit import audit_cluster
from chaos.run.injector import Injector
from chaos.run.live import LiveView, RunStatus, rates_between
from chaos.run.setup import (
    check_disk_layers,
    check_flush_interval,
    check_inter_broker_protocol,
    check_ready,
    create_run_topic,
    judged_as_performed,
    run_client,
    run_config,
    snapshot,
)
from chaos.run.step_loop import StepLoop
from chaos.run.supervisor import restart_exited
from client import Client
from eventlog.jsonlines import JsonLinesWriter
from rpc.messages import ElectLeadersRequest, ElectLeadersResponse
from rundir.coverage import coverage_of, write_coverage
from rundir.invariants import ClusterSnapshot, RunVerdict, judge, problems, time_to_convergence
from rundir.invariants.judge import SCENARIO_CHECKS
from rundir.invariants.names import EVERY_RUN
from rundir.layout import RunDir, new_run_id
from rundir.reader import load_run, write_verdict
from rundir.rejudge import ACKNOWLEDGED_LOSS_ALLOWED, finished_run_completeness
from rundir.results import InvariantResult
from zkdata.client import KafkaZkClient
from zkdata.errors import ZkDataError

#: Seconds between cluster snapshots after the heal.
SNAPSHOT_EVERY_S = 1.0


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
    keep_topic: bool = False
    #: The inter-broker protocol every broker must run (`domain.protocols`); None: any.
    inter_broker_protocol: str | None = None
    #: The flush interval every broker must run (`domain.flush`); None: any.
    flush_interval: int | None = None


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """A finished run: its directory, its verdict and the recovery time after the heal."""

    run_dir: Path
    verdict: RunVerdict
    recovery_s: float | None
    faults: int
    bug_switches: tuple[str, ...] = ()
    #: Steps and actions that failed or could not prove they took effect (verdict.json's
    #: `failed_steps`): a run with any did not perform its whole schedule.
    failed_steps: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """No invariant is violated."""
        return self.verdict.ok

    @property
    def exercised(self) -> bool:
        """Every step and action of the schedule was performed as planned."""
        return not self.failed_steps


def run(request: RunRequest) -> RunOutcome:
    """Perform the run (see the module docstring). Raises `RunSetupError` before anything
    was done to the cluster when it is not ready."""
    schedule = request.schedule or request.scenario.schedule(request.seed)
    scenario = request.scenario.for_schedule(schedule)
    request = dataclasses.replace(request, scenario=scenario)
    with ClusterHandle.for_project(request.project) as cluster:
        check_ready(cluster)
        check_inter_broker_protocol(cluster, request.inter_broker_protocol)
        check_flush_interval(cluster, request.flush_interval)
        check_disk_layers(cluster, schedule)
        run_dir = RunDir(request.runs_root / new_run_id(scenario.name, schedule.seed)).create()
        topic = f"{scenario.workload.topic}-{secrets.token_hex(3)}"
        started_ms = int(time.time() * 1000)
        replay = request.schedule is not None
        config = run_config(scenario, schedule, replay, cluster, topic, started_ms)
        run_dir.write_json(run_dir.config, config)
        write_schedule(run_dir.schedule, schedule)
        switches = tuple(config["bug_switches"])
        with LiveView(force_plain=request.force_plain) as view:
            view.say(f"run {run_dir.run_id}: {scenario.name}, topic {topic}, in {run_dir.root}")
            if switches:
                view.say(f"BUG SWITCHES ON: {', '.join(switches)} (docs/bugs.md)")
            create_run_topic(cluster, scenario, topic)
            view.say(f"topic {topic} is led with its full ISR on every broker")
            performed = _Performance(request, schedule, cluster, run_dir, topic, view, switches)
            performed.go()
        recovery = time_to_convergence(performed.snapshots)
        judged = judged_as_performed(scenario, schedule, performed.left_out_actions, config)
        if performed.left_out_actions:  # `chaos check` judges what config.json names
            run_dir.write_json(run_dir.config, config)
        nodes = run_dir.copy_events(performed.event_dir) if performed.event_dir else []
        inputs = load_run(
            run_dir.root,
            unclean_leader_election=scenario.workload.unclean_leader_election,
            acknowledged_loss_allowed=config[ACKNOWLEDGED_LOSS_ALLOWED],
            convergence_bound_ms=int(scenario.convergence_s * 1000),
            also=judged & SCENARIO_CHECKS.keys(),
            since_ms=started_ms,
            topics=(topic,),
        )
        verdict = _only(judge(inputs), judged)
        verdict = with_completeness(verdict, finished_run_completeness(run_dir.root))
        write_verdict(run_dir.root, verdict)
        write_coverage(run_dir.root, coverage_of(inputs.events, started_ms), started_ms)
        _append_summary(run_dir, scenario, schedule, verdict, recovery, nodes, performed)
        if not request.keep_topic:
            _delete_topic(cluster, topic)
        return RunOutcome(
            run_dir.root,
            verdict,
            None if recovery is None else recovery / 1000,
            len(schedule.steps),
            switches,
            tuple(performed.failed_steps),
        )


def _delete_topic(cluster: ClusterHandle, topic: str) -> None:
    """Hand the run's topic to the controller for deletion, so runs do not pile up
    partitions on the cluster (its events stay in the run's copy of the logs)."""
    try:
        cluster.read_zk(lambda zk: delete_topic(zk, topic))
    except (FaultError, ZkDataError) as exc:
        print(f"could not delete topic {topic}: {exc}", file=sys.stderr)


def _only(verdict: RunVerdict, wanted: frozenset[str]) -> RunVerdict:
    """The verdict restricted to the scenario's invariants and what every run is judged
    on (the replication specifications' invariants, Jepsen's queue classes), in judge's
    order, with the history's measures kept."""
    kept = wanted | frozenset(EVERY_RUN)
    return dataclasses.replace(verdict, results=tuple(r for r in verdict.results if r.name in kept))


def with_completeness(verdict: RunVerdict, complete: InvariantResult) -> RunVerdict:
    """`verdict` with `run_dir_complete` first, as `python -m chaos check` orders it."""
    return dataclasses.replace(verdict, results=(complete, *verdict.results))


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
        bug_switches: tuple[str, ...] = (),
    ) -> None:
        self.request = request
        self.bug_switches = bug_switches
        self.schedule = schedule
        self.cluster = cluster
        self.run_dir = run_dir
        self.topic = topic
        self.view = view
        self.snapshots: list[ClusterSnapshot] = []
        self.failed_steps: list[str] = []
        self.left_out_actions: list[Action] = []
        self.event_dir = endpoints.event_dir(cluster)
        self.workload: WorkloadResult | None = None
        self.workload_error: str | None = None
        self._progress: Progress | None = None
        self._rates: dict[str, float] = {}
        self._watch: ControllerWatch | None = None
        self._stop = threading.Event()
        self.heal_at: float | None = None

    def go(self) -> None:
        """Run the workload, the schedule and the convergence watch; heal on any exit."""
        scraper = MetricsScraper(self.run_dir.metrics, lambda: endpoints.metrics_urls(self.cluster))
        client = run_client(self.cluster, self.topic)
        config = dataclasses.replace(
            self.request.scenario.workload.config(),
            topic=self.topic,
            duration_s=self.schedule.end_s,
            progress_interval_s=1.0,
        )
        worker = threading.Thread(
            target=self._work, args=(client, config), name="chaos-workload", daemon=True
        )
        steps = StepLoop(
            self.schedule,
            self.cluster,
            self.view,
            self.event_dir,
            {self.request.scenario.workload.topic: self.topic},
            self._elect,
        )
        self.failed_steps = steps.failed_steps  # the loop records them; the summary reads them
        self.left_out_actions = steps.left_out_actions
        started = steps.start_clock()
        scraper.start()
        worker.start()
        try:
            with ControllerWatch(self._read_controller) as self._watch:
                with Injector(self.cluster, self.run_dir.root) as injector:
                    status = functools.partial(self._status, started)
                    self.heal_at = steps.perform(injector, status, self._stop)
                for said in restart_exited(self.cluster):  # all undone: it exited itself
                    self.view.say(said)
                self._converge(started, worker)
            self.view.say(audit_cluster(self.cluster, self.run_dir, self.topic))
        finally:
            self._stop.set()
            worker.join()
            scraper.stop()
            client.close()
        if self.workload_error:
            self.view.say(f"workload failed: {self.workload_error}")

    def _work(self, client: Client, config: WorkloadConfig) -> None:
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

    def _read_controller(self) -> tuple[int | None, int | None]:
        """The controller and its epoch from ZooKeeper (on the `ControllerWatch` thread:
        it may wait as long as ZooKeeper has no quorum)."""

        def read(zk: KafkaZkClient) -> tuple[int | None, int | None]:
            found = zk.get_controller_epoch()
            return zk.get_controller_id(), None if found is None else found.epoch

        return self.cluster.read_zk(read)

    def _status(self, started: float, phase: str, injector: Injector | None) -> RunStatus:
        counts = dict(self._progress.counts) if self._progress else {}
        active = []
        if injector is not None:
            active = [f"{f.kind} {','.join(f.targets)}" for f in injector.active().values()]
        seen = self._watch.seen() if self._watch else ControllerSeen(None, None, known=False)
        return RunStatus(
            self.request.scenario.name,
            self.schedule.seed,
            time.monotonic() - started,
            self.schedule.end_s,
            phase,
            tuple(active),
            counts,
            self._rates,
            seen.controller,
            seen.epoch,
            note="" if seen.known else "controller unknown: no fresh answer from ZooKeeper",
            bug_switches=self.bug_switches,
        )

    def _elect(self, request: ElectLeadersRequest) -> ElectLeadersResponse:
        """Send `request` to the controller (the `elect-leaders` action) on a client of
        its own, closed after the answer."""
        with run_client(self.cluster, self.topic) as client:
            return client.elect_leaders(
                request.election_type, request.partitions, timeout_ms=request.timeout_ms
            )

    def _converge(self, started: float, worker: threading.Thread) -> None:
        """Snapshots after the heal until converged and the workload is over, or the
        scenario's bound (counted from the heal) has passed."""
        heal = self.heal_at if self.heal_at is not None else time.monotonic()
        bound = heal + self.request.scenario.convergence_s
        writer = JsonLinesWriter(self.run_dir.snapshots)
        converged = False
        with run_client(self.cluster, self.topic) as client:
            try:
                while True:
                    now = time.monotonic()
                    if not converged or now < bound:
                        after = int((now - heal) * 1000)
                        try:
                            snap = snapshot(self.cluster, client, self.topic, after)
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
        bug_switches=list(performed.bug_switches),
    )
    run_dir.write_json(run_dir.verdict, document)
