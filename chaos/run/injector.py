"""The injector: starts and stops faults on one cluster, proves each step, and keeps the
heal state so that nothing is left behind.

    with Injector(cluster, run_dir) as injector:
        started = injector.start(Kill(("broker2",)))   # recorded, started, took effect?
        ...
        injector.stop(started.fault_id)                # undone, verified, forgotten

`start` refuses a fault whose targets are not the project's services (`ForeignContainer`,
`UnknownTarget`) before anything happens; otherwise it records the fault in the heal
state *first* (`chaos.run.heal_state`), starts it, and waits up to a deadline for its
`took_effect` check. A fault that fails to start or never takes effect is reported and
undone at once. `stop` undoes a fault and waits for its `undone` check; only a verified
undo removes it from the heal state. Leaving the `with` block (normally, on an error or
on Ctrl-C) heals every fault still recorded; a run killed outright is healed later by
`python -m chaos heal`, which rebuilds the faults from the state (`heal_all`).

A fault that keeps a trace of what it observed (`chaos.faults.base.Traced`) has it written
to `<run_dir>/traces/<fault id>.jsonl` after its took-effect check, caught or not, and
written again after its undo (a fault that goes on observing while it lasts, such as
`request`, has more to say by then).

Every step is one line of `<run_dir>/faults.jsonl`:
`{"ts": ms, "fault": id, "kind", "targets", "phase": start|took_effect|stop|undone,
"ok", "detail"}`, plus `params` (the fault's `describe()`) on `start` and `elapsed_ms`
on the two checks.

Faults may overlap (several started before any is stopped). A fault that cuts links
(`chaos.faults.base.CutsLinks`) is measured beside the links the other active faults cut:
a second cut laid over a first expects the first's links to stay unanswered when it proves
it took effect, and the first, healed while the second holds, expects the second's links
still cut when it proves it is undone.

Threads: any. The step loop starts and stops each step's fault on a thread of its own,
so that a fault proving itself holds no other step up: the injector's bookkeeping (ids,
the heal state, the active faults, the fault log, the traces) is under one lock, and the
faults' own work and checks run outside it. A cut measured while another fault lays or
lifts its rules may see a moment between the two; the checks poll until it passes.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from chaos.errors import FaultError, ForeignContainer, UnknownTarget
from chaos.faults.base import Check, Cuts, CutsLinks, Fault, FaultTarget, Traced
from chaos.faults.grudge import merge
from chaos.faults.process import UP
from chaos.faults.registry import fault_from_json
from chaos.run.heal_state import ActiveFault, HealState
from eventlog.jsonlines import JsonLinesWriter, read_json_lines

FAULT_LOG = "faults.jsonl"
#: The run directory's folder of fault traces.
TRACE_DIR = "traces"


@dataclass(frozen=True, slots=True)
class Deadlines:
    """How long a fault may take to take effect and to be undone, and the polling step."""

    took_effect_s: float = 30.0
    undone_s: float = 60.0
    poll_s: float = 0.2


@dataclass(frozen=True, slots=True)
class Injection:
    """The outcome of a start (its `took_effect` check) or of a stop (its `undone` check)."""

    fault_id: str
    fault: Fault | None
    check: Check

    @property
    def ok(self) -> bool:
        """The check held."""
        return self.check.ok


class Injector:
    """Starts, proves, stops and heals faults on `cluster`, logging to `run_dir`."""

    def __init__(
        self,
        cluster: FaultTarget,
        run_dir: Path,
        *,
        state_dir: Path | None = None,
        deadlines: Deadlines = Deadlines(),
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        wall_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self.cluster = cluster
        self.run_dir = run_dir
        self.state = HealState(run_dir, cluster.project, state_dir)
        self.deadlines = deadlines
        self._monotonic = monotonic
        self._sleep = sleep
        self._wall_ms = wall_ms
        self._active: dict[str, Fault] = {}
        #: Active faults stopped (their rules deleted), their undo not yet proven.
        self._stopped: set[str] = set()
        self._next_id = 1 + sum(
            1
            for _, line in read_json_lines(run_dir / FAULT_LOG)
            if isinstance(line, dict) and line.get("phase") == "start"
        )
        self._log = JsonLinesWriter(run_dir / FAULT_LOG)
        self._lock = threading.RLock()

    def active(self) -> dict[str, Fault]:
        """The faults this injector started and has not undone, by id."""
        with self._lock:
            return dict(self._active)

    def start(self, fault: Fault, fault_id: str | None = None) -> Injection:
        """Record, start and prove `fault` (see the module doc); a fault that does not take
        effect by the deadline is undone before this returns, with `ok` false. A `fault_id`
        that names a fault still active is refused with `ValueError`."""
        with self._lock:
            if fault_id is not None and fault_id in self._active:
                raise ValueError(f"fault id {fault_id!r} is already in use by an active fault")
            fault_id = fault_id or self._new_id()
            try:
                for target in fault.targets:
                    self.cluster.status(target)  # ForeignContainer / UnknownTarget first
            except FaultError as exc:
                self._record(fault_id, fault, "start", Check(False, f"refused: {exc}"))
                raise
            self.state.add(
                ActiveFault(fault_id, fault.kind, fault.targets, fault.describe(), self._wall_ms())
            )
            self._active[fault_id] = fault
        try:
            fault.start(self.cluster)
        except FaultError as exc:
            self._record(fault_id, fault, "start", Check(False, f"{type(exc).__name__}: {exc}"))
            undo = self._undo(fault_id, fault)
            failed = Check(False, f"start failed: {exc}; undo: {undo.check.detail}")
            return Injection(fault_id, fault, failed)
        self._record(fault_id, fault, "start", Check(True, "started"))
        effect = self._measure(fault_id, fault, "took_effect", self.deadlines.took_effect_s)
        self._write_trace(fault_id, fault)
        if not effect.ok:
            undo = self._undo(fault_id, fault)
            missed = Check(False, f"{effect.detail}; undo: {undo.check.detail}")
            return Injection(fault_id, fault, missed)
        return Injection(fault_id, fault, effect)

    def stop(self, fault: Fault | str) -> Injection:
        """Undo a fault this injector holds (by value or id) and verify it; one already
        undone (or never known) is a no-op that holds."""
        with self._lock:
            fault_id = fault if isinstance(fault, str) else self._id_of(fault)
            held = self._active.get(fault_id) if fault_id is not None else None
        if fault_id is None or held is None:
            return Injection(fault_id or "", None, Check(True, "not active"))
        return self._undo(fault_id, held)

    def heal_all(self) -> list[Injection]:
        """Undo every fault the heal state still holds for this run, newest first, faults
        of an earlier process rebuilt from their descriptions."""
        outcomes = []
        with self._lock:
            entries = list(reversed(self.state.load()))
            for entry in entries:  # rebuilt first: each undo is measured beside the others
                if entry.id not in self._active:
                    try:
                        self._active[entry.id] = fault_from_json(entry.kind, entry.data)
                    except FaultError as exc:
                        lost = Check(False, f"cannot rebuild: {exc}")
                        outcomes.append(Injection(entry.id, None, lost))
        for entry in entries:
            with self._lock:
                fault = self._active.get(entry.id)
            if fault is not None:
                outcomes.append(self._undo(entry.id, fault))
        return outcomes

    def close(self) -> None:
        """Close the fault log (the heal state stays as it is)."""
        with self._lock:
            self._log.close()

    def __enter__(self) -> Injector:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            self.heal_all()
        finally:
            self.close()

    def _undo(self, fault_id: str, fault: Fault) -> Injection:
        try:
            fault.stop(self.cluster)
            with self._lock:
                self._stopped.add(fault_id)
            self._record(fault_id, fault, "stop", Check(True, "stopped"))
        except FaultError as exc:
            self._record(fault_id, fault, "stop", Check(False, f"{type(exc).__name__}: {exc}"))
        self._write_trace(fault_id, fault)
        undone = self._measure(fault_id, fault, "undone", self.deadlines.undone_s)
        if undone.ok:
            with self._lock:
                self.state.remove(fault_id)
                self._active.pop(fault_id, None)
                self._stopped.discard(fault_id)
        return Injection(fault_id, fault, undone)

    def _measure(self, fault_id: str, fault: Fault, phase: str, timeout_s: float) -> Check:
        """Poll the phase's check until it holds or `timeout_s` passes; log the last one.
        A target that is foreign or gone ends the wait at once: waiting does not mend it
        (a peer the check found gone does not: another fault's restart mends it)."""
        measure = self._check_of(fault_id, fault, phase)
        began = self._monotonic()
        while True:
            hopeless = False
            try:
                check = measure(self.cluster)
            except (ForeignContainer, UnknownTarget) as exc:
                check = Check(False, f"{type(exc).__name__}: {exc}")
                # a peer gone between a listing and a probe (another fault's kill) passes;
                # the fault's own target gone does not
                hopeless = isinstance(exc, ForeignContainer) or self._target_down(fault)
            except FaultError as exc:
                check = Check(False, f"{type(exc).__name__}: {exc}")
            elapsed = self._monotonic() - began
            if check.ok or hopeless or elapsed >= timeout_s:
                break
            self._sleep(self.deadlines.poll_s)
        if not check.ok:
            check = Check(False, f"{phase} not seen after {elapsed:.3g}s: {check.detail}")
        self._record(fault_id, fault, phase, check, elapsed_ms=int(elapsed * 1000))
        return check

    def _target_down(self, fault: Fault) -> bool:
        """A target of `fault` is neither running nor paused (or cannot be asked)."""
        try:
            return any(self.cluster.status(t) not in UP for t in fault.targets)
        except FaultError:
            return True

    def _check_of(self, fault_id: str, fault: Fault, phase: str) -> Callable[[FaultTarget], Check]:
        """The phase's check; for a fault that cuts links, beside the other active faults'."""
        if not isinstance(fault, CutsLinks):
            return fault.took_effect if phase == "took_effect" else fault.undone
        cutter: CutsLinks = fault

        def beside(cluster: FaultTarget) -> Check:
            already_cut = self._cut_by_others(fault_id)
            if phase == "took_effect":
                return cutter.took_effect_beside(cluster, already_cut)
            return cutter.undone_beside(cluster, already_cut)

        return beside

    def _cut_by_others(self, fault_id: str) -> Cuts:
        """The links cut by the active faults other than `fault_id`, but those already
        stopped: their rules are gone while their undo is being proven, and two such
        undos counting each other's links as cut would each wait out its deadline."""
        with self._lock:
            others = [
                held
                for other, held in self._active.items()
                if other != fault_id and other not in self._stopped and isinstance(held, CutsLinks)
            ]
        return merge(held.cut_links(self.cluster) for held in others)

    def _record(
        self, fault_id: str, fault: Fault, phase: str, check: Check, elapsed_ms: int | None = None
    ) -> None:
        line: dict[str, object] = {
            "ts": self._wall_ms(),
            "fault": fault_id,
            "kind": fault.kind,
            "targets": list(fault.targets),
            "phase": phase,
            "ok": check.ok,
            "detail": check.detail,
        }
        if phase == "start":
            line["params"] = dict(fault.describe())
        if elapsed_ms is not None:
            line["elapsed_ms"] = elapsed_ms
        with self._lock:
            self._log.append(json.dumps(line, sort_keys=True))

    def _write_trace(self, fault_id: str, fault: Fault) -> None:
        if not isinstance(fault, Traced):
            return
        records = fault.trace()
        if not records:
            return
        traces = self.run_dir / TRACE_DIR
        with self._lock:
            traces.mkdir(exist_ok=True)
            (traces / f"{fault_id}.jsonl").unlink(missing_ok=True)  # the whole trace, once
            writer = JsonLinesWriter(traces / f"{fault_id}.jsonl")
            try:
                for record in records:
                    writer.append(json.dumps(record, sort_keys=True))
            finally:
                writer.close()

    def _id_of(self, fault: Fault) -> str | None:
        return next((i for i, held in self._active.items() if held == fault), None)

    def _new_id(self) -> str:
        while f"f{self._next_id}" in self._active:
            self._next_id += 1
        fault_id = f"f{self._next_id}"
        self._next_id += 1
        return fault_id
