"""Properties of the checker over histories simulated against a correct log: such a history
always passes; dropping any acknowledged value from the final read always fails; an extra
copy of a value written exactly once always fails."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from domain import TopicPartition
from rundir.checker import FinalRead, check
from rundir.testing import HistoryBuilder

PROPERTY = settings(max_examples=200, deadline=None)

#: How one simulated send ends, and how many copies of its value reach the log.
OUTCOMES = {
    "ok": 1,
    "fail": 0,
    "info_applied": 1,
    "info_not_applied": 0,
    "ok_after_unknown_applied": 2,  # the unknown attempt landed, then the retry was acked
    "ok_after_unknown_not_applied": 1,
    "open_applied": 1,
    "open_not_applied": 0,
    "ok_acks1": 1,
}

steps = st.lists(
    st.tuples(
        st.integers(0, 2),  # producer
        st.integers(0, 2),  # partition
        st.sampled_from(sorted(OUTCOMES)),
        st.booleans(),  # a consumer polls the partition afterwards
    ),
    max_size=40,
)


@dataclass
class Simulation:
    """A correct cluster: every applied record stays at the offset it was given."""

    history: HistoryBuilder
    logs: dict[int, list[str]]
    exact_once: list[tuple[int, str]]  # (partition, value) acked with no unknown attempt

    def final(self) -> FinalRead:
        return self.history.final_read(self.logs)


def simulate(plan: list[tuple[int, int, str, bool]]) -> Simulation:
    h = HistoryBuilder()
    logs: dict[int, list[str]] = {p: [] for p in range(3)}
    exact_once: list[tuple[int, str]] = []
    for n, (producer, partition, outcome, poll_after) in enumerate(plan):
        process, value, log = f"p{producer}", f"p{producer}-{n}", logs[partition]
        log.extend([value] * OUTCOMES[outcome])
        offset = len(log) - 1
        if outcome == "ok":
            h.send(process, partition, value, "ok", offset)
            exact_once.append((partition, value))
        elif outcome == "ok_acks1":
            h.send(process, partition, value, "ok", offset, acks=1)
        elif outcome.startswith("ok_after_unknown"):
            h.send(process, partition, value, "ok", offset, attempts_unknown=1)
        elif outcome == "fail":
            h.send(process, partition, value, "fail")
        elif outcome.startswith("info"):
            h.send(process, partition, value, "info")
        else:
            h.send(process, partition, value, None)
        if poll_after:
            h.poll("consumer", partition, list(enumerate(log)))
    return Simulation(h, logs, exact_once)


@PROPERTY
@given(plan=steps)
def test_a_history_of_a_correct_log_passes(plan: list[tuple[int, int, str, bool]]) -> None:
    sim = simulate(plan)
    verdict = check(sim.history.ops, sim.final())
    assert verdict.ok, verdict.report()


@PROPERTY
@given(plan=steps, data=st.data())
def test_dropping_any_acknowledged_value_fails(
    plan: list[tuple[int, int, str, bool]], data: st.DataObject
) -> None:
    sim = simulate(plan)
    acked = [
        (op.partition, op.value)
        for op in sim.history.ops
        if op.f == "send" and op.type == "ok" and op.acks == -1
    ]
    assume(acked)
    partition, value = data.draw(st.sampled_from(acked))
    final = sim.final()
    tp = TopicPartition("t", partition)
    kept = tuple(r for r in final.partitions[tp] if r[1] != value)
    dropped = FinalRead(final.started_ns, {**final.partitions, tp: kept})

    verdict = check(sim.history.ops, dropped)

    assert not verdict.ok
    assert value in {a.value for a in verdict.result("lost_writes").violations}


@PROPERTY
@given(plan=steps, data=st.data())
def test_an_extra_copy_of_a_value_written_once_fails(
    plan: list[tuple[int, int, str, bool]], data: st.DataObject
) -> None:
    sim = simulate(plan)
    assume(sim.exact_once)
    partition, value = data.draw(st.sampled_from(sim.exact_once))
    sim.logs[partition].append(value)

    verdict = check(sim.history.ops, sim.final())

    assert not verdict.ok
    assert value in {a.value for a in verdict.result("duplicates").violations}
