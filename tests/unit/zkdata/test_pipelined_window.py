"""`pipelined`: requests issued in order, answers handed out in order, and never more than
the window outstanding (issued but not yet handed to the caller)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkdata.pipelined_reads import pipelined


class Outstanding:
    """Issues fake requests and tracks how many are out at once."""

    def __init__(self) -> None:
        self.issued: list[int] = []
        self.out = 0
        self.most = 0

    def issue(self, key: int) -> str:
        self.issued.append(key)
        self.out += 1
        self.most = max(self.most, self.out)
        return f"answer-{key}"


@given(st.integers(0, 200), st.integers(1, 50))
def test_answers_come_in_order_with_at_most_the_window_outstanding(n: int, window: int) -> None:
    requests = Outstanding()
    handed = []
    for key, answer in pipelined(range(n), requests.issue, window):
        assert answer == f"answer-{key}"
        handed.append(key)
        requests.out -= 1
    assert handed == requests.issued == list(range(n))
    assert requests.most == min(n, window)


def test_the_first_requests_go_out_before_any_answer_is_awaited() -> None:
    requests = Outstanding()
    first = next(pipelined(range(10), requests.issue, 4))
    assert first == (0, "answer-0")
    assert requests.issued == [0, 1, 2, 3]


def test_a_window_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="window must be at least 1"):
        list(pipelined(range(3), str, 0))
