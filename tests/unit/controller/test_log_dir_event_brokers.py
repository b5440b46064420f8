"""`notifying_brokers`: which brokers a batch of log-directory event notifications names."""

from __future__ import annotations

import pytest

from controller.log_dir_events import notifying_brokers


@pytest.mark.parametrize(
    ("notifications", "brokers"),
    [
        pytest.param({}, [], id="none"),
        pytest.param({"log_dir_event_0000000000": 2}, [2], id="one"),
        pytest.param(
            {"log_dir_event_0000000000": 3, "log_dir_event_0000000001": 3},
            [3],
            id="one-broker-twice",
        ),
        pytest.param(
            {"log_dir_event_0000000004": 5, "log_dir_event_0000000002": 1},
            [1, 5],
            id="sorted-by-broker",
        ),
    ],
)
def test_each_notifying_broker_once_sorted(
    notifications: dict[str, int], brokers: list[int]
) -> None:
    assert notifying_brokers(notifications) == brokers
