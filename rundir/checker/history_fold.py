"""Both streaming folds of the history checker fed in one pass (`fold_history`): each
operation unpacked, counted and dispatched once, straight to what `ChecksFold` (the
checks of `rundir.checker.checks`) and `QueueFold` (Jepsen's classes) do with a send or
a poll, rather than once by each fold's `feed`. The verdict is the one the two `feed`s
give; the pass costs about one dispatch per operation fewer. Pure; the caller's thread.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from itertools import repeat
from typing import Any

from rundir.checker.queue_fold import QueueFold
from rundir.checker.stream_checks import ChecksFold
from rundir.history import HistoryOp

__all__ = ["fold_history", "unplaced"]

#: An operation with its place in the history, `(time_ns, file, line, op)`, or with
#: no place (`unplaced`): the place goes to the folds' `at` when it is fed.
Placed = tuple[Any, Any, Any, HistoryOp]


def unplaced(history: Iterable[HistoryOp]) -> Iterable[Placed]:
    """`history` as `fold_history` takes it, for a caller that needs no places."""
    none = repeat(None)
    return zip(none, none, none, history, strict=False)  # `none` never ends


def fold_history(
    placed: Iterable[Placed],
    checks: ChecksFold,
    queue: QueueFold,
    counts: Counter[tuple[str, str]],
    process: str | None,
) -> int:
    """Feed every operation of `placed` (in history order) to `checks` and `queue` as
    their `feed`s would, counting each `(f, type)` in `counts`; how many were of
    `process`."""
    mine = sends = polls = 0  # the invokes of each are counted apart, by `f` alone
    pending, twice, orphans = checks.pending, checks.twice, checks.orphans
    invokes = queue.invokes
    check_send, check_poll = checks.send, checks.poll
    queue_send, queue_poll = queue.send, queue.poll
    for at in placed:
        op = at[3]
        kind, f, who = op[:3]
        if who == process:
            mine += 1
        key = (who, op[10])  # op_id
        if kind == "invoke":
            invokes[key] = op
            if f != "send":
                polls += 1
                continue
            sends += 1
            if op[8] is not None and key not in orphans:  # value
                earlier = pending.get(key)
                if earlier is not None:  # an op id invoked twice before its completion
                    twice.setdefault(key, []).append(earlier)
                pending[key] = op
            continue
        counts[f, kind] += 1
        checks.at = queue.at = at
        invoke = invokes.pop(key, None)
        if pending.pop(key, None) is None and f == "send":
            orphans.add(key)
        if twice:
            twice.pop(key, None)
        if f == "send":
            if op[8] is not None:
                check_send(op)
            queue_send(op)
        elif kind == "ok":
            check_poll(op)
            queue_poll(op, invoke)
    for f, invoked in (("send", sends), ("poll", polls)):
        if invoked:
            counts[f, "invoke"] += invoked
    return mine
