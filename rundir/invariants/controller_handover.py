"""Invariants of a controller handing over its role, that only some scenarios ask for, over
the events written since the run started (`since_ms`): the logs are whole files, and what
happened before the run is not the run's doing. Pure; any thread.

- `paused_controller_resigns`: every controller superseded during the run (a
  `controller_elected` during the run with a higher epoch by another broker; the
  superseded one may have been elected before the run) logged `controller_resigned`
  for its epoch afterwards, unless its process ended first (a later `node_started` or
  `node_stopped`). That nothing it sent afterwards was obeyed is
  `controller_epoch_fencing`'s concern.
- `resigned_controller_silent`: a controller that resigned an epoch (`controller_resigned`)
  queues no request of that epoch or an older one afterwards
  (`control_request_sent`), until its process starts again (`node_started`). Brokers
  refuse such requests, so the fencing invariants cannot see a controller that goes on
  acting after it lost its role; its own log can. Nor may a request it queued before
  reach a broker later: no broker logs `request_accepted` or `request_rejected` from
  that controller (`controller_id`) at that epoch or an older one more than
  `DELIVERY_GRACE_MS` after the resignation, unless the controller's process started
  again meanwhile, and that controller itself got an answer of that epoch or an older
  one (`control_response_received`) more than `DELIVERY_GRACE_MS` after resigning: it
  kept a channel. A resigning controller closes its channels before it logs the
  resignation, cancelling what is in flight; the grace covers a request a broker had
  already received and is still handling. Without that answer a late arrival is bytes
  the network still held: a request written to a connection that a cut had silenced,
  which TCP delivers when the cut heals, after the channel was closed (seen 42.5 s
  after a resignation), and which the broker refuses by its epoch.
- `controller_writes_fenced`: no write of a controller lands after a newer controller
  epoch was elected: no `controller_writes_committed` (any multi of its fenced writes:
  state znodes, assignments, deletions, notifications), no `leader_elected` and no
  `isr_changed` by the controller, with a `controller_epoch` below that of a
  `controller_elected` whose epoch bump committed before it. A controller's writes are
  fenced by the `/controller_epoch` version it won, so once a successor bumped the epoch
  they fail atomically. When the write carries the `zxid` it committed at and the
  election its `epoch_zxid`, ZooKeeper's order decides, with no grace: a write whose
  zxid exceeds the bump's is a violation, however close the clocks put them. Otherwise
  (logs without zxids) the clock does: the write must not be logged more than
  `SUPERSEDED_GRACE_MS` after the election (each of those events is logged after its
  ZooKeeper write succeeded; the grace covers a write that landed just before the bump
  and was logged just after it).
"""

from __future__ import annotations

from rundir.events import Event, EventLogs, events_since
from rundir.invariants.names import (
    CONTROLLER_WRITES_FENCED,
    PAUSED_CONTROLLER_RESIGNS,
    RESIGNED_CONTROLLER_SILENT,
)
from rundir.results import InvariantResult, Violation

__all__ = [
    "DELIVERY_GRACE_MS",
    "SUPERSEDED_GRACE_MS",
    "controller_writes_fenced",
    "paused_controller_resigns",
    "resigned_controller_silent",
]

#: How long after a newer controller epoch was elected an older controller may still log a
#: write that landed just before the epoch changed (the write's answer was on its way).
SUPERSEDED_GRACE_MS = 2000

#: How long after a controller's resignation a broker may still log a request of the
#: resigned epoch (already received, still being handled when the channel closed).
DELIVERY_GRACE_MS = 3000


def paused_controller_resigns(logs: EventLogs, since_ms: int) -> InvariantResult:
    """See the module docstring. Elections are read from the whole logs (the superseded
    controller was usually elected before the run); only supersessions during the run
    count."""
    events = events_since(logs, 0)
    elected = [e for e in events if e.kind == "controller_elected"]
    violations = []
    checked = 0
    for i, won in enumerate(elected):
        epoch = int(won.fields["controller_epoch"])
        broker = won.fields["controller_id"]
        later = [
            e
            for e in elected[i + 1 :]
            if e.fields["controller_id"] != broker
            and int(e.fields["controller_epoch"]) > epoch
            and e.ts >= since_ms
        ]
        if not later:
            continue
        checked += 1
        after = [e for e in events if e.node == won.node and e.ts >= won.ts and e is not won]
        resigned = any(
            e.kind == "controller_resigned" and int(e.fields.get("controller_epoch", -1)) == epoch
            for e in after
        )
        ended = any(e.kind in ("node_started", "node_stopped") for e in after)
        if not resigned and not ended:
            violations.append(
                Violation(
                    f"controller epoch {epoch}",
                    f"broker {broker} was superseded by broker {later[0].fields['controller_id']} "
                    f"(epoch {later[0].fields['controller_epoch']}) and never resigned",
                    (won, later[0]),
                )
            )
    note = "" if checked else "no controller was superseded during the run"
    return InvariantResult(PAUSED_CONTROLLER_RESIGNS, tuple(violations), checked, note)


def resigned_controller_silent(logs: EventLogs, since_ms: int) -> InvariantResult:
    """See the module docstring. Resignations are read from the whole logs (a controller
    may have resigned just before the run); only requests queued or delivered during the
    run count."""
    violations = []
    checked = 0
    for log in logs.values():
        resigned: Event | None = None
        for e in log:
            if e.kind == "node_started":
                resigned = None
            elif e.kind == "controller_resigned":
                epoch = int(e.fields.get("controller_epoch", -1))
                if resigned is None or epoch > int(resigned.fields.get("controller_epoch", -1)):
                    resigned = e
            elif e.kind == "control_request_sent" and e.ts >= since_ms:
                checked += 1
                if resigned is None:
                    continue
                epoch = int(e.fields.get("controller_epoch", -1))
                if epoch <= int(resigned.fields.get("controller_epoch", -1)):
                    violations.append(
                        Violation(
                            f"{e.node} controller epoch {epoch}",
                            f"{e.fields.get('api')} to broker {e.fields.get('broker_id')} "
                            f"queued after the controller resigned epoch "
                            f"{resigned.fields.get('controller_epoch')}",
                            (resigned, e),
                        )
                    )
    delivered, late = _delivered_after_resigning(logs, since_ms)
    return InvariantResult(
        RESIGNED_CONTROLLER_SILENT, tuple(violations + late), checked + delivered
    )


def _delivered_after_resigning(logs: EventLogs, since_ms: int) -> tuple[int, list[Violation]]:
    """How many requests brokers logged during the run, and those that came from a
    controller more than `DELIVERY_GRACE_MS` after it resigned their epoch (or a newer
    one) in a process that had not started again by then."""
    events = events_since(logs, 0)
    resignations = [e for e in events if e.kind == "controller_resigned"]
    restarts = [e for e in events if e.kind == "node_started"]
    answers = [e for e in events if e.kind == "control_response_received"]
    checked = 0
    late: list[Violation] = []
    for e in events:
        if e.kind not in ("request_accepted", "request_rejected") or e.ts < since_ms:
            continue
        checked += 1
        sender, epoch = e.int_field("controller_id"), e.int_field("controller_epoch")
        if sender is None or epoch is None:
            continue
        gone = next(
            (
                r
                for r in resignations
                if r.int_field("controller_id") == sender
                and int(r.fields.get("controller_epoch", -1)) >= epoch
                and r.ts + DELIVERY_GRACE_MS < e.ts
                and not any(s.node == r.node and r.ts < s.ts <= e.ts for s in restarts)
            ),
            None,
        )
        heard = None if gone is None else _answered_after(gone, epoch, answers, restarts)
        if gone is not None and heard is not None:
            outcome = "accepted" if e.kind == "request_accepted" else "refused"
            late.append(
                Violation(
                    f"{gone.node} controller epoch {epoch}",
                    f"{e.fields.get('api')} of controller epoch {epoch} reached {e.node} "
                    f"({outcome}) {(e.ts - gone.ts) / 1000:.1f} s after the controller "
                    f"resigned epoch {gone.fields.get('controller_epoch')}, which got an "
                    f"answer {(heard.ts - gone.ts) / 1000:.1f} s after it: it kept a channel",
                    (gone, e, heard),
                )
            )
    return checked, late


def _answered_after(
    resigned: Event, epoch: int, answers: list[Event], restarts: list[Event]
) -> Event | None:
    """The first answer of `epoch` or older the resigned controller logged more than
    `DELIVERY_GRACE_MS` after resigning, in the same process."""
    for a in answers:
        if (
            a.node == resigned.node
            and a.ts > resigned.ts + DELIVERY_GRACE_MS
            and int(a.fields.get("controller_epoch", -1)) <= epoch
            and not any(s.node == a.node and resigned.ts < s.ts <= a.ts for s in restarts)
        ):
            return a
    return None


def _controller_write(e: Event) -> bool:
    return e.kind in ("leader_elected", "controller_writes_committed") or (
        e.kind == "isr_changed" and e.fields.get("by") == "controller"
    )


def controller_writes_fenced(logs: EventLogs, since_ms: int) -> InvariantResult:
    """See the module docstring. Elections are read from the whole logs; only writes
    logged during the run count. Each write is held against every election of a newer
    epoch: by zxid when both carry one, else by the clock with `SUPERSEDED_GRACE_MS`."""
    events = events_since(logs, 0)
    elections = [e for e in events if e.kind == "controller_elected" and _epoch(e) >= 0]
    violations = []
    checked = with_zxid = 0
    for e in events:
        if not _controller_write(e) or e.ts < since_ms:
            continue
        checked += 1
        epoch = _epoch(e)
        newer = [n for n in elections if _epoch(n) > epoch] if epoch >= 0 else []
        if e.int_field("zxid") is None:
            ordered, unordered = [], newer
        else:
            with_zxid += 1
            ordered = [n for n in newer if n.int_field("epoch_zxid") is not None]
            unordered = [n for n in newer if n.int_field("epoch_zxid") is None]
        found = _committed_after_a_bump(e, ordered) or _logged_past_the_grace(e, unordered)
        if found is not None:
            violations.append(found)
    note = f"{with_zxid} of {checked} writes carry the zxid they committed at" if checked else ""
    return InvariantResult(CONTROLLER_WRITES_FENCED, tuple(violations), checked, note)


def _written(e: Event, epoch: int) -> str:
    if e.kind == "controller_writes_committed":
        return (
            f"{e.fields.get('writes')} write(s) ({', '.join(map(str, e.fields.get('paths') or []))}"
            f"{', ...' if (e.int_field('writes') or 0) > 3 else ''}) written at "
            f"controller epoch {epoch}"
        )
    return (
        f"{e.kind} of {e.fields.get('topic')}-{e.fields.get('partition')} (leader epoch "
        f"{e.fields.get('leader_epoch')}, zkVersion {e.fields.get('zk_version')}) written at "
        f"controller epoch {epoch}"
    )


def _committed_after_a_bump(e: Event, newer: list[Event]) -> Violation | None:
    """The write (carrying `zxid`) against newer elections that carry `epoch_zxid`:
    ZooKeeper's order, no grace (a fenced write cannot commit after the epoch it checks
    has changed)."""
    zxid = e.int_field("zxid")
    if zxid is None:
        return None
    after = []
    for n in newer:
        bumped = n.int_field("epoch_zxid")
        if bumped is not None and zxid > bumped:
            after.append((bumped, n))
    if not after:
        return None
    bumped, bump = min(after, key=lambda pair: pair[0])
    return Violation(
        f"{e.node} controller epoch {_epoch(e)}",
        f"{_written(e, _epoch(e))} committed at zxid {zxid:#x}, after broker "
        f"{bump.fields.get('controller_id')} won epoch {_epoch(bump)} at zxid {bumped:#x} "
        f"(logged {(e.ts - bump.ts) / 1000:.1f} s after it)",
        (bump, e),
    )


def _logged_past_the_grace(e: Event, newer: list[Event]) -> Violation | None:
    """The fallback for events without zxids (older logs): the write was logged more than
    `SUPERSEDED_GRACE_MS` after a newer epoch's election."""
    past = [n for n in newer if n.ts + SUPERSEDED_GRACE_MS < e.ts]
    if not past:
        return None
    newest = max(past, key=_epoch)
    return Violation(
        f"{e.node} controller epoch {_epoch(e)}",
        f"{_written(e, _epoch(e))} {(e.ts - newest.ts) / 1000:.1f} s after broker "
        f"{newest.fields.get('controller_id')} was elected with epoch {_epoch(newest)}",
        (newest, e),
    )


def _epoch(e: Event) -> int:
    """The event's `controller_epoch`, -1 when it has none."""
    epoch = e.int_field("controller_epoch")
    return -1 if epoch is None else epoch
