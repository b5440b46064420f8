"""A history simulated against a correct log, with producers that retry and consumers
that tail and sometimes seek, has no failing Jepsen queue anomaly; what it has is only
what its configuration allows (a retried send's second copy, a seek's jump)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rundir.checker import FinalRead, queue_classes
from rundir.testing import HistoryBuilder

#: How one simulated send ends, and how many copies of its value reach the log.
COPIES = {"ok": 1, "fail": 0, "info_in": 1, "info_out": 0, "retried_in": 2, "open": 1}

step = st.one_of(
    st.tuples(
        st.just("send"), st.integers(0, 1), st.integers(0, 1), st.sampled_from(sorted(COPIES))
    ),
    st.tuples(st.just("poll"), st.integers(0, 1), st.integers(0, 1), st.integers(1, 4)),
    st.tuples(st.just("seek"), st.integers(0, 1), st.integers(0, 1), st.integers(0, 20)),
)


def simulate(plan: list[tuple[str, int, int, object]]) -> tuple[HistoryBuilder, FinalRead]:
    h = HistoryBuilder()
    logs: dict[int, list[str]] = {0: [], 1: []}
    position: dict[tuple[int, int], int] = {}
    for n, (kind, who, partition, arg) in enumerate(plan):
        log = logs[partition]
        if kind == "send":
            process, value = f"p{who}", f"p{who}-{n}"
            log.extend([value] * COPIES[str(arg)])
            if arg == "ok":
                h.send(process, partition, value, "ok", len(log) - 1)
            elif arg == "retried_in":
                h.send(process, partition, value, "ok", len(log) - 1, attempts_unknown=1)
            elif arg == "fail":
                h.send(process, partition, value, "fail")
            elif arg == "open":
                h.send(process, partition, value, None)
            else:
                h.send(process, partition, value, "info")
        elif kind == "poll":
            start = position.get((who, partition), 0)
            records = list(enumerate(log))[start : start + int(str(arg))]
            h.poll(f"c{who}", partition, records, from_offset=start, high_watermark=len(log))
            if records:
                position[(who, partition)] = records[-1][0] + 1
        else:
            position[(who, partition)] = min(int(str(arg)), len(log))
    return h, h.final_read(logs)


@settings(max_examples=200, deadline=None)
@given(plan=st.lists(step, max_size=50))
def test_a_correct_log_has_no_failing_anomaly(plan: list[tuple[str, int, int, object]]) -> None:
    h, final = simulate(plan)
    verdict = queue_classes(h.ops, final)
    failing = [str(v) for r in verdict.results if not r.allowed for v in r.violations]
    assert failing == []
    allowed = {r.name for r in verdict.results if r.allowed}
    assert allowed <= {"duplicate", "poll-skip", "nonmonotonic-poll"}
