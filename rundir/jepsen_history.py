"""The workload history in Jepsen's form (docs/workload.md, "Jepsen export"): one EDN op
map per line, as the ops of Jepsen's Kafka queue workload (`jepsen.tests.kafka`), so that
its checker can judge the same run. Pure; any thread.

Each history line becomes one op, in the merged history's order (by `time_ns`):

    {:index 0, :time 0, :type :invoke, :process 2, :f :send,
     :value [[:send 0 "producer-0-0"]], :process-name "producer-0"}
    {:index 1, :time 1500000, :type :ok, :process 2, :f :send,
     :value [[:send 0 [0 "producer-0-0"]]], :process-name "producer-0"}
    {:index 9, :time 9000000, :type :ok, :process 1, :f :poll,
     :value [[:poll {0 [[0 "producer-0-0"] [1 "producer-0-2"]]}]], :process-name "consumer"}

A send's micro-op is `[:send key value]`, `[:send key [offset value]]` once its offset is
known; a poll's is `[:poll]`, `[:poll {key [[offset value] ...]}]` when it read. The key is
the partition number when the history has one topic, else `"<topic>-<partition>"`.
`:process` numbers the processes in the order of their names; `:process-name` keeps the
name. `:time` is nanoseconds since the history's first line; a failed or unknown outcome
carries its `:error`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from rundir.edn import dumps, keyword
from rundir.history import HistoryOp

__all__ = ["jepsen_lines", "jepsen_op"]

_SEND, _POLL = keyword("send"), keyword("poll")
_KEYS = {name: keyword(name) for name in ("index", "time", "type", "process", "f", "value")}
_TYPES = {name: keyword(name) for name in ("invoke", "ok", "fail", "info")}
_ERROR, _NAME = keyword("error"), keyword("process-name")


def jepsen_op(
    op: HistoryOp, index: int, time_ns: int, process: int, key: int | str
) -> dict[Any, Any]:
    """The Jepsen op map of one history line (see the module docstring)."""
    if op.f == "send":
        known = op.type in ("ok", "info") and op.offset is not None
        value: list[Any] = [_SEND, key, [op.offset, op.value] if known else op.value]
    elif op.type == "ok" and op.records is not None:
        value = [_POLL, {key: [list(r) for r in op.records]}]
    else:
        value = [_POLL]
    out: dict[Any, Any] = {
        _KEYS["index"]: index,
        _KEYS["time"]: time_ns,
        _KEYS["type"]: _TYPES[op.type],
        _KEYS["process"]: process,
        _KEYS["f"]: _SEND if op.f == "send" else _POLL,
        _KEYS["value"]: [value],
    }
    if op.type in ("fail", "info") and op.error is not None:
        out[_ERROR] = op.error
    out[_NAME] = op.process
    return out


def jepsen_lines(history: Iterable[HistoryOp]) -> Iterator[str]:
    """Each op of `history` (merged, in `time_ns` order) as one line of EDN, no newline.
    Iterates `history` twice (a history kept as its files is read twice, holding none of
    it): first for its processes, topics and start, then for the lines."""
    names: set[str] = set()
    topics: set[str] = set()
    start: int | None = None
    for op in history:
        names.add(op.process)
        topics.add(op.topic)
        start = op.time_ns if start is None else min(start, op.time_ns)
    processes = {name: i for i, name in enumerate(sorted(names))}
    one_topic, start = len(topics) <= 1, start or 0
    for index, op in enumerate(history):
        key: int | str = op.partition if one_topic else f"{op.topic}-{op.partition}"
        yield dumps(jepsen_op(op, index, op.time_ns - start, processes[op.process], key))
