"""The runner's step loop: a schedule's cues (`chaos.generator.timeline`) performed on time through
the injector, on the caller's thread, until the heal.

    steps = StepLoop(schedule, cluster, view, event_dir, topics, elect)
    started = steps.start_clock()            # the workload starts now
    heal_at = steps.perform(injector, status, stop)

Between cues the loop keeps the live view fresh (`status`, every `TICK_S`). A step with a
trigger is armed at its `at_s`: the loop reads the nodes' event logs every
`chaos.run.event_watch.POLL_S` while it waits, starts the step when its event comes and stops
it `duration_s` later; a trigger whose wait runs out (or that the heal overtakes) is a
failed step unless it is optional (then the step is left out), as is a fault that is
refused, fails to start or does not take effect, and an undo that cannot be verified
(`failed_steps`, in verdict.json).

Each step lives on a thread of its own: it starts its fault, waits for it to take effect
(up to the injector's deadline: a session expiry takes seconds to prove, a fault that
cannot prove itself thirty), holds it until its stop cue (a triggered step: `duration_s`
after its event) or the heal, and undoes it. So a slow start holds no other step up, and
the steps start when the schedule says, as the overlap rules that drew it assume. The
admin actions run in order on one thread of their own, for the same reason. A step the
loop itself reaches, or whose event it sees, only once the heal is due is not started
(an optional trigger's step is left out, any other fails), never laid on the heal. A
step whose role names nobody now (`NoTargetNow`: the brokers it could name are down) or
whose fault cannot start or prove itself because another fault took its target away
meanwhile (for a `request` fault, whose proxy runs in the controller's namespace, the
controller too), or whose proof met the undo of a fault of its kind on its target (an
earlier step stopped late), is left out too (`_went_away`, `_undone_beside`): the
schedule's faults met. So is a step whose
role ZooKeeper gave no answer for while a fault of the schedule held the ensemble (a
step on ZooKeeper servers, or a `zk-lost-reply`, within its window,
`chaos.generator.overlap.window`, which counts the servers' recovery): a leader killed
under load left the ensemble without one for 13 s; and so is an action whose role
names nobody, or a spare one (`SPARE_ACTIONS`) ZooKeeper gave no answer for then or
whose controller could not be reached while any step held (`chaos.run.left_out`). At the heal every
step thread stops its fault and the actions still queued are performed before the
injector heals what is left. The loop never waits on ZooKeeper
(`chaos.cluster.zk_off_loop`): a read a step needs gives up after `STEP_READ_S`, an
action's after `ACTION_READ_S`.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from chaos.cluster.handle import ClusterHandle
from chaos.cluster.zk_off_loop import ACTION_READ_S, STEP_READ_S, ZkNoAnswer, within
from chaos.errors import FaultError, NoTargetNow
from chaos.faults.process import UP
from chaos.faults.request import proxy_host
from chaos.generator.schedule import Action, Schedule, Step
from chaos.generator.timeline import CueType, timeline
from chaos.run.actions import ActionFailed, perform
from chaos.run.event_watch import POLL_S, EventTail, EventWatch, Fired
from chaos.run.injector import Injector
from chaos.run.left_out import VIA_CONTROLLER, spared, zookeeper_held_at
from chaos.run.live import LiveView, RunStatus
from rpc.messages import ElectLeadersRequest, ElectLeadersResponse

__all__ = ["TICK_S", "StepLoop"]

#: Seconds between live-view updates while the loop waits for a cue.
TICK_S = 0.25

#: The live view's status in a phase (`"faults"`, `"healing"`), with the faults active.
StatusOf = Callable[[str, Injector | None], RunStatus]


class StepLoop:
    """Performs one schedule (see the module docstring)."""

    def __init__(
        self,
        schedule: Schedule,
        cluster: ClusterHandle,
        view: LiveView,
        event_dir: Path | None,
        topics: Mapping[str, str],
        elect: Callable[[ElectLeadersRequest], ElectLeadersResponse],
    ) -> None:
        self.schedule = schedule
        self.cluster = cluster
        self.view = view
        self.event_dir = event_dir
        self.topics = dict(topics)
        self.elect = elect
        self.failed_steps: list[str] = []
        #: The actions left out (`spared`): the run is not judged on what they premise.
        self.left_out_actions: list[Action] = []
        self.fault_ids: dict[int, str] = {}
        #: Each started step's fault kind and targets, and when its undo began, by index.
        self._footprints: dict[int, tuple[str, frozenset[str]]] = {}
        self._undoing: dict[int, float] = {}
        self._events = EventWatch(EventTail(event_dir))
        #: Each launched step's thread and the event that releases its fault, by index.
        self._steps: dict[int, tuple[threading.Thread, threading.Event]] = {}
        self._actions: queue.Queue[Action | None] = queue.Queue()
        self._started = time.monotonic()
        self._started_ms = int(time.time() * 1000)
        self._stop = threading.Event()

    def start_clock(self) -> float:
        """Time 0 of the schedule is now (the workload starts); its monotonic time. The
        event logs are read from here on."""
        self._events = EventWatch(EventTail(self.event_dir))
        self._started = time.monotonic()
        self._started_ms = int(time.time() * 1000)
        return self._started

    def perform(self, injector: Injector, status: StatusOf, stop: threading.Event) -> float:
        """Every cue up to the heal, whose monotonic time this returns. `stop` cuts the
        waits short (the run is ending)."""
        self._stop = stop
        actor = threading.Thread(target=self._act_in_turn, name="actions", daemon=True)
        actor.start()
        try:
            self._cues(injector, status)
        finally:  # on the heal, and on an interrupt before the injector heals
            self._actions.put(None)
            for _, release in self._steps.values():
                release.set()
            for thread, _ in self._steps.values():
                thread.join()
            actor.join()
        for index in self._events.disarm_all():
            self._not_triggered(index, "its event had not come by the heal")
        for healed in injector.heal_all():
            self.view.say(f"heal {healed.fault_id}: {healed.check.detail}")
        heal_at = time.monotonic()
        self.view.say(f"{self.schedule.heal_at_s:6.1f}s heal: every fault undone")
        return heal_at

    def _cues(self, injector: Injector, status: StatusOf) -> None:
        """Every cue up to the heal, on time."""
        for cue in timeline(self.schedule):
            phase = "healing" if cue.type in (CueType.HEAL, CueType.END) else "faults"
            self._wait_until(cue.at_s, phase, injector, status)
            if cue.type is CueType.START and cue.index is not None:
                step = self.schedule.steps[cue.index]
                if self._past_heal():  # the loop itself was held up
                    self._left_out(cue.index, step.trigger is not None and step.trigger.optional)
                elif step.trigger is None:
                    self._launch(injector, cue.index, step, step.at_s, None)
                else:
                    self._arm(cue.index, step)
            elif cue.type is CueType.STOP and cue.index is not None:
                launched = self._steps.get(cue.index)
                if launched is not None:
                    launched[1].set()
            elif cue.type is CueType.ACTION and cue.index is not None:
                self._actions.put(self.schedule.actions[cue.index])
            elif cue.type is CueType.HEAL:
                return

    def _wait_until(self, at: float, phase: str, injector: Injector, status: StatusOf) -> None:
        """Keep the live view fresh until `at`; meanwhile start the triggered steps whose
        event came and give up on those whose wait ran out."""
        while True:
            self._triggered_cues(injector)
            now = time.monotonic()
            left = self._started + at - now
            if left <= 0:
                return
            self.view.update(status(phase, injector))
            wait = min(TICK_S, left)
            if self._events.waiting:
                wait = min(wait, POLL_S)
            self._stop.wait(max(0.0, wait))

    def _triggered_cues(self, injector: Injector) -> None:
        fired, expired = self._events.due(time.monotonic())
        for index in expired:
            trigger = self.schedule.steps[index].trigger
            if trigger is not None and trigger.optional:
                self.view.say(f"       step {index}: left out: its optional event did not come")
            else:
                self._not_triggered(index, "its event did not come in time")
        for f in fired:
            self._fire(injector, f)

    def _arm(self, index: int, step: Step) -> None:
        trigger = step.trigger
        assert trigger is not None
        if self.event_dir is None:
            self._not_triggered(index, "the cluster has no event logs to watch")
            return
        since_ms = self._started_ms + int(step.at_s * 1000)
        deadline = self._started + step.at_s + trigger.within_s
        self._events.arm(index, trigger, since_ms, deadline)
        self.view.say(f"{step.at_s:6.1f}s step {index} {step.fault.kind}: {trigger.describe()}")

    def _past_heal(self) -> bool:
        """The heal is due: the loop was held up and a step reached now would land on the
        heal."""
        return time.monotonic() - self._started >= self.schedule.heal_at_s

    def _left_out(self, index: int, optional: bool) -> None:
        """Step `index` is not started: the heal was due before the loop reached it. An
        optional trigger's step is left out as when its event does not come; any other is
        a failed step (the run did not perform its schedule)."""
        if optional:
            self.view.say(f"       step {index}: left out: the heal was due before it")
        else:
            self._not_triggered(index, "the heal was due before the loop reached it")

    def _fire(self, injector: Injector, fired: Fired) -> None:
        step = self.schedule.steps[fired.index]
        at = time.monotonic() - self._started
        if self._past_heal():
            self._left_out(fired.index, step.trigger is not None and step.trigger.optional)
            return
        node = fired.event.get("node", "?")
        self.view.say(f"{at:6.1f}s step {fired.index}: {fired.event.get('kind')} of {node}")
        self._launch(injector, fired.index, step, at, self._started + at + step.duration_s)

    def _launch(
        self, injector: Injector, index: int, step: Step, at: float, stop_at: float | None
    ) -> None:
        """Step `index` on a thread of its own (module docstring): stopped on its stop cue,
        at `stop_at` (monotonic) if given, or at the heal."""
        release = threading.Event()
        thread = threading.Thread(
            target=self._hold,
            args=(injector, index, step, at, release, stop_at),
            name=f"step-{index}",
            daemon=True,
        )
        self._steps[index] = (thread, release)
        thread.start()

    def _hold(
        self,
        injector: Injector,
        index: int,
        step: Step,
        at: float,
        release: threading.Event,
        stop_at: float | None,
    ) -> None:
        try:
            if self._start(injector, index, step, at):
                release.wait(None if stop_at is None else max(0.0, stop_at - time.monotonic()))
                self._stop_step(injector, index)
        except Exception as exc:  # a thread's error must reach the verdict, not vanish
            self.failed_steps.append(f"step {index}: {type(exc).__name__}: {exc}")
            self.view.say(f"       step {index}: FAILED: {type(exc).__name__}: {exc}")

    def _not_triggered(self, index: int, why: str) -> None:
        step = self.schedule.steps[index]
        self.failed_steps.append(f"step {index} ({step.describe()}): not started: {why}")
        self.view.say(f"       step {index} {step.fault.kind}: NOT STARTED: {why}")

    def _start(self, injector: Injector, index: int, step: Step, at: float) -> bool:
        """Start step `index` (`at`: seconds into the run, for the view); whether its fault
        is in effect and waits for its stop."""
        spec = step.fault
        rng = random.Random(f"{self.schedule.seed}:{step.at_s}:{spec.kind}:{spec.target}")
        targets: tuple[str, ...] = ()
        runs: dict[str, str] = {}
        try:
            targets = within(
                lambda: self.cluster.resolve(spec.target, rng), STEP_READ_S, spec.target
            )
            runs = {t: self.cluster.started_at(t) for t in targets}
            if spec.kind in VIA_CONTROLLER:  # its proxy runs in the controller's namespace
                runs |= self._controller_run()
            fault = spec.fault(tuple(targets))
            began = time.monotonic()
            self._footprints[index] = (spec.kind, frozenset(targets))
            done = injector.start(fault, fault_id=f"step-{index}")
        except NoTargetNow as exc:  # other faults took away what the role could name
            self.view.say(f"       step {index}: left out: {exc}")
            return False
        except ZkNoAnswer as exc:  # the role could not be read
            holder = zookeeper_held_at(self.schedule, at)
            if holder is None:
                self.failed_steps.append(f"step {index} ({spec.describe()}): {exc}")
                self.view.say(f"{at:6.1f}s {spec.kind} {spec.target}: NOT STARTED: {exc}")
            else:
                self.view.say(f"       step {index}: left out: {exc} (step {holder} held it)")
            return False
        except FaultError as exc:
            if not self._went_away(index, runs, str(exc)):
                self.failed_steps.append(f"step {index} ({spec.describe()}): {exc}")
                self.view.say(f"{at:6.1f}s {spec.kind} {spec.target}: NOT STARTED: {exc}")
            return False
        if not done.ok and self._went_away(index, runs, done.check.detail):
            return False
        if not done.ok and self._undone_beside(index, began, done.check.detail):
            return False
        self.view.say(
            f"{at:6.1f}s {spec.kind} {','.join(targets)}: "
            + ("in effect" if done.ok else "DID NOT TAKE EFFECT")
            + f" ({done.check.detail})"
        )
        if not done.ok:
            self.failed_steps.append(f"step {index} ({spec.describe()}): {done.check.detail}")
            return False
        self.fault_ids[index] = done.fault_id
        if step.duration_s == 0:
            self._stop_step(injector, index)
            return False
        return True

    def _controller_run(self) -> dict[str, str]:
        """The controller's service and when its container run started, or nothing when
        none is known: where a fault of `VIA_CONTROLLER` puts its proxy (`proxy_host`)."""
        service = within(lambda: proxy_host(self.cluster), STEP_READ_S, "controller")
        return {} if service is None else {service: self.cluster.started_at(service)}

    def _went_away(self, index: int, runs: dict[str, str], why: str) -> bool:
        """Whether a target of step `index`, whose fault could not start or prove itself,
        is down now or runs a new container run (`runs`: each target's start time when the
        step began): another fault took it away meanwhile, and a restart leaves none of a
        fault's rules behind (the overlap rules let a fault that slows a broker meet one
        that takes it away). The step is then left out, as the schedule's two faults met,
        not a failed step; said so with `why`."""
        try:
            gone = [
                t
                for t, began in runs.items()
                if self.cluster.status(t) not in UP or self.cluster.started_at(t) != began
            ]
        except FaultError:
            return False
        if gone:
            self.view.say(f"       step {index}: left out: {', '.join(gone)} went away ({why})")
        return bool(gone)

    def _undone_beside(self, index: int, began: float, why: str) -> bool:
        """Whether, while step `index` (started at `began`) proved itself, another step's
        fault of the same kind on one of its targets was undone: a fault whose proof ran
        past its end (a bandwidth's flood measured under load) is stopped late, and its
        undo removes what the later one laid through the same mechanism. The step is then
        left out, as the schedule's faults met; said so with `why`."""
        kind, targets = self._footprints[index]
        for other, at in list(self._undoing.items()):
            other_kind, other_targets = self._footprints.get(other, ("", frozenset()))
            if other != index and at >= began and other_kind == kind and targets & other_targets:
                said = f"step {other}'s undo came on {', '.join(sorted(targets & other_targets))}"
                self.view.say(f"       step {index}: left out: {said} ({why})")
                return True
        return False

    def _stop_step(self, injector: Injector, index: int) -> None:
        fault_id = self.fault_ids.pop(index, None)
        if fault_id is None:
            return
        self._undoing[index] = time.monotonic()
        undone = injector.stop(fault_id)
        if not undone.ok:
            self.failed_steps.append(f"step {index} undo: {undone.check.detail}")
        self.view.say(f"       undo {fault_id}: {'done' if undone.ok else 'FAILED'}")

    def _act_in_turn(self) -> None:
        """Perform the queued actions in order until the heal's end marker."""
        while (action := self._actions.get()) is not None:
            try:
                self._act(action)
            except Exception as exc:  # a thread's error must reach the verdict, not vanish
                self.failed_steps.append(f"action {action.kind}: {type(exc).__name__}: {exc}")
                self.view.say(f"{action.at_s:6.1f}s {action.kind}: FAILED: {exc!r}")

    def _act(self, action: Action) -> None:
        try:
            said = within(
                lambda: perform(action, self.cluster.read_zk, self.topics, self.elect),
                ACTION_READ_S,
                action.kind,
            )
        except (ActionFailed, FaultError) as exc:
            why = spared(self.schedule, action, exc)
            if why is not None:
                self.left_out_actions.append(action)
                said = f"left out: {exc} ({why})"
            else:
                self.failed_steps.append(f"action {action.kind}: {exc}")
                said = f"FAILED: {exc}"
        self.view.say(f"{action.at_s:6.1f}s {action.kind}: {said}")
