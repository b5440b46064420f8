"""Test doubles for the run-directory contract: `HistoryBuilder` for hand-written workload
histories and their final reads (hand-made event logs are
`rundir.invariants.testing.EventLogBuilder`). For tests only; one thread."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from domain import TopicPartition
from rundir.checker import FinalRead
from rundir.history import Completion, HistoryOp, OpF

__all__ = ["HistoryBuilder"]


class HistoryBuilder:
    """Hand-written histories: each call appends an invoke and its completion, one
    nanosecond apart, to `ops`. One thread."""

    def __init__(self, topic: str = "t") -> None:
        self.topic = topic
        self.ops: list[HistoryOp] = []
        self._time_ns = 0
        self._op_ids: dict[str, int] = defaultdict(int)

    def now(self) -> int:
        """A fresh time after every line so far (e.g. when a final read begins)."""
        self._time_ns += 1
        return self._time_ns

    def _invoke(
        self,
        f: OpF,
        process: str,
        partition: int,
        offset: int | None,
        value: str | None,
        acks: int | None,
    ) -> int:
        op_id = self._op_ids[process]
        self._op_ids[process] += 1
        t = self.now()
        self.ops.append(
            HistoryOp(
                "invoke", f, process, t, t, self.topic, partition, offset, value, None, op_id, acks
            )
        )
        return op_id

    def send(
        self,
        process: str,
        partition: int,
        value: str,
        type: Completion | None = "ok",
        offset: int | None = None,
        *,
        attempts_unknown: int | None = None,
        acks: int = -1,
    ) -> None:
        """A send of `value` completing as `type` (None: never completes). `info` defaults
        to one unknown attempt, the rest to none."""
        op_id = self._invoke("send", process, partition, None, value, acks)
        if type is None:
            return
        unknown = attempts_unknown if attempts_unknown is not None else int(type == "info")
        error = None if type == "ok" else "ERROR"
        t = self.now()
        self.ops.append(
            HistoryOp(
                type=type,
                f="send",
                process=process,
                time_ns=t,
                wall_ms=t,
                topic=self.topic,
                partition=partition,
                offset=offset,
                value=value,
                error=error,
                op_id=op_id,
                acks=acks,
                attempts=unknown + 1,
                attempts_unknown=unknown,
            )
        )

    def poll(
        self,
        process: str,
        partition: int,
        records: Sequence[tuple[int, str]],
        *,
        from_offset: int = 0,
        high_watermark: int | None = None,
    ) -> None:
        """A poll that read `records` (high watermark: just past the last, by default)."""
        op_id = self._invoke("poll", process, partition, from_offset, None, None)
        if high_watermark is None:
            high_watermark = records[-1][0] + 1 if records else from_offset
        t = self.now()
        self.ops.append(
            HistoryOp(
                type="ok",
                f="poll",
                process=process,
                time_ns=t,
                wall_ms=t,
                topic=self.topic,
                partition=partition,
                offset=high_watermark,
                value=None,
                error=None,
                op_id=op_id,
                attempts=1,
                records=tuple(records),
            )
        )

    def final_read(self, logs: Mapping[int, Sequence[str]]) -> FinalRead:
        """A final read begun now holding `logs[p]` at offsets 0.. of each partition."""
        return FinalRead(
            self.now(),
            {TopicPartition(self.topic, p): tuple(enumerate(values)) for p, values in logs.items()},
        )
