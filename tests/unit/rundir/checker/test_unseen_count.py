"""The count of acknowledged values no poll has read (`UnseenCount`): a change of several
at once, as a poll's first reads come, leaves the count, its maximum and its samples
where that many changes of one leave them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rundir.checker.queue_fold import SAMPLES, UnseenCount

deltas = st.lists(
    st.integers(-2 * SAMPLES, 2 * SAMPLES).filter(lambda d: d != 0), max_size=4 * SAMPLES
)


@settings(max_examples=200, deadline=None)
@given(changes=deltas)
def test_a_change_of_several_is_as_many_changes_of_one(changes: list[int]) -> None:
    at_once, one_by_one = UnseenCount(), UnseenCount()
    for time_ns, delta in enumerate(changes):
        at_once.change(delta, time_ns)
        for _ in range(abs(delta)):
            one_by_one.change(1 if delta > 0 else -1, time_ns)

    assert (at_once.unseen, at_once.unseen_max) == (one_by_one.unseen, one_by_one.unseen_max)
    assert at_once.samples == one_by_one.samples


def test_samples_stay_bounded_over_a_long_run_of_changes() -> None:
    count = UnseenCount()
    count.change(100 * SAMPLES, 1)
    count.change(-40 * SAMPLES, 2)

    assert (count.unseen, count.unseen_max) == (60 * SAMPLES, 100 * SAMPLES)
    assert 0 < len(count.samples) < SAMPLES
    assert {time_ns for time_ns, _ in count.samples} == {1, 2}
