"""The generic generator: `generic_schedule(seed, duration_s, ...)` draws a schedule of
every fault family, several faults at once where they are safe together, faults started
by the cluster's own events, and admin operations mixed into the workload, from
`random.Random(seed)` and nothing else: the same arguments give the same schedule.

What it draws, in this order (each from the one generator, so the order is part of the
seed's meaning):

1. The pace. A seed draws a dense schedule (faults start after heavy-tailed gaps from
   their predecessor's start, so they overlap) or, one time in `SPARSE_SHARE`, a sparse
   one (one fault at a time, each starting `SPARSE_GAP` after the previous one's window
   ended, see `chaos.generator.overlap.window`): a sparse schedule is judged on
   `no_offline_partitions` too (`chaos.generator.scenarios.judged`).
2. The admin operations (`chaos.generator.admin_draws`): a side topic `<topic>-side`
   (replication factor 2, so a reassignment copies replicas) created early, maybe grown
   (`add-partitions`), maybe reassigned, maybe one of its overrides altered
   (`alter-config`), and deleted before the heal; maybe preferred elections of the
   workload's topic (`elect-leaders`), a forced controller election (`move-controller`)
   and, when the side topic is not reassigned, a broker retired (`vacate`); on pairs
   (step 6) the reassignment may move the workload's topic instead.
3. The timed faults. First, in a dense schedule, maybe correlated faults
   (`chaos.generator.correlated`): a double outage, a failover after a restart, a
   flapping controller, a backdrop, ..., then a controller cut in turn drawn from a
   generator of its own (a forced controller election between its two cuts is taken
   out, `chaos.generator.correlated.outside_cut`), a lost registration reply
   (`chaos.generator.lost_registration`) and a reset mid-failover
   (`chaos.generator.reset_mid_failover`), each from another. Then, with admin
   operations, maybe a race (`chaos.generator.races`: a forced controller election
   chasing an admin operation or a reset of the controller's ZooKeeper connection, the
   controller's links slowed around it), drawn from a generator of its own and placed
   where it fits beside the correlated faults. Then kinds rotate through `kinds` but
   `request` (each once per round); a kind whose fault cannot be active with those already
   placed (`chaos.generator.overlap`) is passed over for the next. Targets and
   params come from `FAULT_DRAWS` (ZooKeeper servers too, for the process kinds and
   `cpu-starve`); durations from `HOLD`, a lognormal clipped to its bounds.
4. The triggered faults: for each hook, with probability `TRIGGER_SHARE`, a fault that
   starts on the event the hook makes the cluster write (`Trigger`): a forced controller
   election or a fault that takes the controller away → `controller_elected`; a fault
   that takes a broker away or preferred elections → `leader_elected`; any broker
   fault → `isr_changed`; the reassignment or retirement → `reassignment_started`; the
   deletion → `topic_deletion_started`; a restart of a broker's process → `broker_registered`, with
   a fault that slows the controller or resets its ZooKeeper connection. A fault on an
   event that starts the controller's work (a leader election, a reassignment, a
   deletion) lands on the controller one time in two. A triggered fault obeys the
   overlap rules over the whole time it may be active. Its trigger is optional: when the
   cluster does not write the event in time (another fault held the controller back),
   the step is left out, not failed.
5. The request faults where control requests flow: with `request` among the kinds, a
   hook that makes the controller send a burst of requests (a forced controller election,
   a fault that takes a broker away, preferred elections) may get a `request` fault
   from its time on, and one of them one started on the first request sent to its broker
   (`control_request_sent` with that `broker_id`, the fault on `broker:<id>`): a request
   fault placed where no request comes never takes effect.
6. The workload's replication (`chaos.generator.replication.draw_replication`): factor
   3 with min ISR 2, or one seed in `PAIRS_SHARE` factor 2 with min ISR 1, from a
   generator of its own seeded by the seed, so that it moves no other draw.

A schedule is data: a caller may drop, add or shift steps and actions (`Schedule`
validates the result; `chaos.generator.overlap.overlap_violations` says whether it keeps
the rules). Errors are `chaos.errors.ScheduleError`s. Pure; any thread.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

from chaos.cluster.roles import RoleClass, parse_role
from chaos.errors import BadTiming
from chaos.faults.params import Scalar
from chaos.faults.registry import FAULT_TYPES, fault_type
from chaos.generator.admin_draws import draw_actions, side_topic
from chaos.generator.correlated import CORRELATED, cut_in_turn, outside_cut
from chaos.generator.fault_draws import FAULT_DRAWS, kind_pool
from chaos.generator.lost_registration import lost_registration
from chaos.generator.overlap import clashes, takes_broker_away, window
from chaos.generator.races import draw_race
from chaos.generator.replication import draw_replication
from chaos.generator.reset_mid_failover import reset_mid_failover
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step, Trigger, seconds
from chaos.generator.timings import (
    DENSE_GAP,
    HOLD,
    ISR_WAIT,
    REGISTER_WAIT,
    SPARSE_GAP,
    TRIGGER_WAIT,
    HeavyTail,
)

__all__ = [
    "BROKER_IDS",
    "DISK_KINDS",
    "GENERIC_KINDS",
    "HOLD",
    "SPARSE_GAP",
    "SPARSE_SHARE",
    "TRIGGER_SHARE",
    "HeavyTail",
    "draw_step",
    "generic_schedule",
    "side_topic",
]

#: The kinds drawn unless told otherwise: every kind but the disk kinds, which need a
#: cluster started with the disk layers (pass `DISK_KINDS` too for one), and
#: `power-loss`, which needs a `disk-volatile` lasting over it and may lose acknowledged
#: writes under Kafka's default flush policy (the `power-loss` scenario), and
#: `cert-rotation`, which restarts every server three times over minutes and replaces the
#: repository's certificates (the `cert-rotation` scenario).
GENERIC_KINDS: tuple[str, ...] = tuple(
    k for k in FAULT_TYPES if k not in ("power-loss", "cert-rotation") and not k.startswith("disk-")
)
#: The disk kinds, drawn when asked for.
DISK_KINDS: tuple[str, ...] = tuple(
    k for k in FAULT_TYPES if k.startswith("disk-") and k != "disk-volatile"
)
#: The compose cluster's broker ids (a `request` fault's `broker:<id>` target).
BROKER_IDS = (1, 2, 3)
#: No fault starts before this: the workload has written for a while.
START_S = 5.0
#: One seed in this many draws a sparse schedule.
SPARSE_SHARE = 3
#: The chance that a hook gets a triggered fault.
TRIGGER_SHARE = 0.5

_ZK = ("zk-follower", "zk-leader")
#: Roles besides `FAULT_DRAWS`'s: the process kinds and `cpu-starve` on ZooKeeper servers (not
#: `memory-squeeze`: docker refuses a limit under what a server already uses).
_MORE_ROLES: Mapping[str, tuple[str, ...]] = {
    "kill": _ZK,
    "stop": _ZK,
    "pause": _ZK,
    "cpu-starve": _ZK,
}
#: Params besides `FAULT_DRAWS`'s choices.
_MORE_PARAMS: Mapping[str, Mapping[str, tuple[Scalar, ...]]] = {
    "request": {
        "kinds": (
            "all",
            "LeaderAndIsr",
            "UpdateMetadata",
            "StopReplica",
            "LeaderAndIsr,StopReplica",
        ),
        "count": (1, 3, 10),
        "delay_ms": (500, 2000, 5000),
        "seed": tuple(range(8)),
    },
}


def generic_schedule(
    seed: int,
    duration_s: float,
    *,
    kinds: Sequence[str] = GENERIC_KINDS,
    topic: str = "chaos-random",
    heal_s: float = 20.0,
    actions: bool = True,
    triggers: bool = True,
    sparse: bool | None = None,
) -> Schedule:
    """A seeded schedule over `duration_s` seconds (see the module docstring), drawn from
    `random.Random(seed)` only: faults of `kinds` (their targets and params drawn),
    admin operations on `topic` and its side topic unless `actions` is False, triggered
    faults unless `triggers` is False, dense or sparse as the seed says unless `sparse`
    says. Nothing is active in the last `heal_s` seconds. `ScheduleError` for bad
    arguments or a duration that leaves no room for a fault."""
    pool = kind_pool(seed, kinds, "generic_schedule")
    heal_at = seconds(duration_s, "duration_s") - seconds(heal_s, "heal_s")
    if heal_at < 10 or heal_s <= 0:
        raise BadTiming(f"heal_s ({heal_s}) must be above 0 and 10 s below duration_s")
    rng = random.Random(seed)
    drawn_sparse = rng.randrange(SPARSE_SHARE) == 0
    draw = _Draw(rng, pool, heal_at, drawn_sparse if sparse is None else sparse)
    replication = draw_replication(seed)
    pairs = replication.factor < len(BROKER_IDS)
    acts = draw_actions(rng, topic, heal_at, pairs) if actions else []
    draw.correlated(seed, triggers)
    acts = outside_cut(draw.steps, acts)
    if actions and not draw.sparse:
        acts = draw.race(seed, acts)
    draw.timed()
    if triggers:
        draw.triggered(acts)
    if not draw.steps:
        raise BadTiming(f"duration_s {duration_s} leaves no room for a fault before the heal")
    steps = tuple(sorted(draw.steps, key=lambda s: s.at_s))
    return Schedule(seed, steps, heal_at, float(duration_s), tuple(acts), replication)


def draw_step(
    rng: random.Random,
    schedule: Schedule,
    at_s: float,
    *,
    kinds: Sequence[str] = GENERIC_KINDS,
    trigger: Trigger | None = None,
) -> Step | None:
    """A fault drawn from `rng` to start at `at_s` (on `trigger`, if given) beside the
    steps of `schedule` under the overlap rules, as `generic_schedule` draws one: kinds
    tried in a shuffled order until one fits, its target, params and duration drawn, its
    end before the heal. None when no kind fits there. The caller adds it
    (`dataclasses.replace(schedule, steps=...)`, sorted by start): a mutation that keeps
    the schedule drawable."""
    pool = kind_pool(0, kinds, "draw_step")
    draw = _Draw(rng, pool, schedule.heal_at_s, sparse=False)
    draw.steps = list(schedule.steps)
    return draw.place(round(at_s, 1), trigger, None)


class _Draw:
    """One schedule's draws, in order; one thread."""

    def __init__(self, rng: random.Random, pool: tuple[str, ...], heal_at: float, sparse: bool):
        self.rng = rng
        self.pool = pool
        self.heal_at = heal_at
        self.sparse = sparse
        self.steps: list[Step] = []
        self._bag: list[str] = []

    def correlated(self, seed: int, triggers: bool) -> None:
        """The correlated faults (step 3), each where it fits; with `triggers`, those
        with a triggered step too."""
        if self.sparse:
            return
        for draw in CORRELATED:
            steps = draw(self.rng, self.heal_at)
            if steps and all(self._fits(step) for step in steps):
                self.steps += steps
        self._add(cut_in_turn(seed, self.heal_at))
        for group in (lost_registration, reset_mid_failover) if triggers else ():
            self._add(group(seed, self.heal_at))

    def _add(self, steps: Sequence[Step]) -> bool:
        """Place `steps` if each fits beside those placed before it, its own included;
        whether they were placed."""
        placed = list(self.steps)
        for step in steps:
            if not self._fits(step):
                self.steps = placed
                return False
            self.steps.append(step)
        return True

    def timed(self) -> None:
        """The timed faults (step 3)."""
        gap = SPARSE_GAP if self.sparse else DENSE_GAP
        t = round(max(START_S, min(START_S + DENSE_GAP.draw(self.rng), self.heal_at / 3)), 1)
        while t < self.heal_at - 1:
            step = self.place(t, None, None)
            if self.sparse and step is not None:
                t = round(window(step)[1] + gap.draw(self.rng), 1)
            else:
                t = round(t + gap.draw(self.rng), 1)

    def triggered(self, acts: list[Action]) -> None:
        """The triggered faults (step 4), hooked on the actions, then the timed steps."""
        hooks: list[tuple[float, str, str | None]] = []
        for act in acts:
            event = _ACTION_EVENTS.get(act.kind)
            if event is not None:
                hooks.append(
                    (act.at_s, event, "controller" if act.kind == "move-controller" else None)
                )
        for step in list(self.steps):
            if step.fault.target == "controller" and takes_broker_away(step.fault):
                hooks.append((step.at_s, "controller_elected", "controller"))
            elif takes_broker_away(step.fault):
                hooks.append((step.at_s, "leader_elected", None))
            elif step.fault.target != "all" and not step.fault.target.startswith("zk"):
                hooks.append((step.at_s, "isr_changed", None))
        for at, event, role in hooks:
            if self.rng.random() < TRIGGER_SHARE:
                wait = (ISR_WAIT if event == "isr_changed" else TRIGGER_WAIT).draw(self.rng)
                if event in _CONTROLLER_WORK and self.rng.random() < 0.5:
                    role = "controller"  # the broker that does the work the event starts
                self.place(at, Trigger(event, (), wait, optional=True), role)
        self._registrations()
        if "request" in self.pool:
            self._requests([at for at, event, _ in hooks if event in _BURSTS])

    def race(self, seed: int, acts: list[Action]) -> list[Action]:
        """`acts` with the race of `seed` (step 3) when its steps fit; `acts` else."""
        race = draw_race(seed, acts, self.heal_at)
        if race is None or outside_cut(self.steps, race.actions) != list(race.actions):
            return acts
        if not self._add(race.steps):
            return acts
        return sorted([*acts, *race.actions], key=lambda a: a.at_s)

    def _registrations(self) -> None:
        """Faults on the controller as a restarted broker registers again (step 4): for
        each step that restarts a broker's process, with probability `TRIGGER_SHARE`, one
        of `_REGISTRATION_KINDS` on the controller started by `broker_registered`, looked
        for over the restart and `REGISTER_WAIT` after it."""
        restarts = [
            s
            for s in self.steps
            if s.fault.kind in ("bounce", "kill", "stop") and takes_broker_away(s.fault)
        ]
        for step in restarts:
            if self.rng.random() < TRIGGER_SHARE:
                kinds = [k for k in self.rng.sample(_REGISTRATION_KINDS, 2) if k in self.pool]
                wait = round(step.duration_s + REGISTER_WAIT.draw(self.rng), 1)
                trigger = Trigger("broker_registered", (), wait, optional=True)
                if kinds:
                    self.place(step.at_s, trigger, "controller", kinds=kinds)

    def _requests(self, bursts: list[float]) -> None:
        """Request faults where control requests flow (step 4): a fault that takes a broker
        away, a forced controller election or preferred elections make the controller
        send a burst of them. For one of them, with probability `TRIGGER_SHARE`, a
        `request` fault on `broker:<id>` started by the first request sent to that broker
        (it then meets the requests that follow, the broker's return); then for each,
        with that probability, one from the hook's time on (in place before the burst)."""
        if bursts and self.rng.random() < TRIGGER_SHARE:
            broker = self.rng.choice(BROKER_IDS)
            wait = TRIGGER_WAIT.draw(self.rng)
            trigger = Trigger("control_request_sent", (("broker_id", broker),), wait, True)
            self.place(self.rng.choice(bursts), trigger, f"broker:{broker}", kinds=("request",))
        for at in bursts:
            if self.rng.random() < TRIGGER_SHARE:
                self.place(at, None, None, kinds=("request",))

    def place(
        self, at: float, trigger: Trigger | None, role: str | None, kinds: Sequence[str] = ()
    ) -> Step | None:
        """Draw a fault starting at `at` (on `trigger`, on `role` when the kind acts on
        brokers) from the next kinds of the rotation (or from `kinds`) until one fits
        beside the steps placed; place it and return it, or None when none fits."""
        candidates = list(kinds) or [self._next_kind() for _ in range(len(self.pool))]
        for kind in candidates:
            step = self._step(kind, at, trigger, role)
            if step is not None and self._fits(step):
                self.steps.append(step)
                return step
        return None

    def _next_kind(self) -> str:
        if not self._bag:
            # a request fault acts only on requests: it is placed where they flow (step 5)
            self._bag = [k for k in self.pool if k != "request"] or list(self.pool)
            self.rng.shuffle(self._bag)
        return self._bag.pop()

    def _step(self, kind: str, at: float, trigger: Trigger | None, role: str | None) -> Step | None:
        roles, choices = FAULT_DRAWS[kind]
        roles = roles + _MORE_ROLES.get(kind, ())
        target = self.rng.choice(roles)
        if role is not None and parse_role(target).role_class is RoleClass.BROKERS:
            target = role  # the hook's broker: the new controller, the request's target
        params = {**choices, **_MORE_PARAMS.get(kind, {})}
        drawn = {name: self.rng.choice(values) for name, values in sorted(params.items())}
        lasts = fault_type(kind).lasts
        # of the kinds that may be either, only a session expiry means something instant
        either = lasts is None and kind == "session-expire"
        instant = lasts is False or (either and self.rng.random() < 0.3)
        hold = 0.0 if instant else HOLD.draw(self.rng)
        wait = trigger.within_s if trigger is not None else 0.0
        # a tenth of a second short of the heal, so that float sums stay before it
        room = math.floor((self.heal_at - at - wait) * 10) / 10 - 0.1
        if room < (0 if instant else 1.0):
            return None
        return Step(at, min(hold, room), FaultSpec.of(kind, target, drawn), trigger)

    def _fits(self, step: Step) -> bool:
        if any(True for _ in clashes(step, self.steps)):
            return False
        if not self.sparse:
            return True
        start, end = window(step)
        margin = SPARSE_GAP.low
        return all(
            end + margin <= window(s)[0] or window(s)[1] + margin <= start for s in self.steps
        )


#: The hook events after which the controller sends a burst of control requests.
_BURSTS = ("controller_elected", "leader_elected")

#: The hook events that start work on the controller: a fault they trigger lands on it
#: one time in two.
_CONTROLLER_WORK = ("leader_elected", "reassignment_started", "topic_deletion_started")
#: What may hit the controller as a broker registers again: it stays up, slowed or its
#: ZooKeeper connection re-made, while it handles the registration (not a starved CPU,
#: which beside a broker away turns off the judging of `registration_served`).
_REGISTRATION_KINDS = ("latency", "zk-reset")

#: The event an action makes the cluster write, that a triggered fault may start on.
_ACTION_EVENTS: Mapping[str, str] = {
    "move-controller": "controller_elected",
    "reassign": "reassignment_started",
    "vacate": "reassignment_started",
    "delete-topic": "topic_deletion_started",
    "elect-leaders": "leader_elected",
}
