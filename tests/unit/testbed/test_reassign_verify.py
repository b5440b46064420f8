"""`testbed reassign verify` without ZooKeeper: the status of one partition, the exit code,
the polling loop (on a fake clock) and the report."""

from __future__ import annotations

import pytest

from domain import TopicPartition
from testbed.reassign_verify import (
    PartitionStatus,
    ReassignmentStatus,
    reassignment_status,
    render_verification,
    verification_exit_code,
    wait_for_reassignment,
)
from zkdata.model import PartitionReassignment, ReplicaAssignment

T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)
COMPLETE, IN_PROGRESS, FAILED = (
    ReassignmentStatus.COMPLETE,
    ReassignmentStatus.IN_PROGRESS,
    ReassignmentStatus.FAILED,
)


REQUEST = PartitionReassignment(T0, (3, 1))


@pytest.mark.parametrize(
    ("requested", "current", "expected"),
    [
        pytest.param(True, ReplicaAssignment((1, 2)), IN_PROGRESS, id="listed-in-request"),
        pytest.param(True, ReplicaAssignment((3, 1)), IN_PROGRESS, id="listed-even-if-there"),
        pytest.param(True, None, IN_PROGRESS, id="listed-unknown-partition"),
        pytest.param(
            False, ReplicaAssignment((3, 1, 2), (3,), (2,)), IN_PROGRESS, id="moving-in-znode"
        ),
        pytest.param(False, ReplicaAssignment((3, 1)), COMPLETE, id="at-target"),
        pytest.param(False, ReplicaAssignment((1, 3)), FAILED, id="other-order"),
        pytest.param(False, ReplicaAssignment((1, 2)), FAILED, id="never-moved"),
        pytest.param(False, None, FAILED, id="partition-gone"),
    ],
)
def test_reassignment_status(
    requested: bool, current: ReplicaAssignment | None, expected: ReassignmentStatus
) -> None:
    assert reassignment_status(REQUEST, requested, current).status is expected


def test_a_failed_status_says_why() -> None:
    assert reassignment_status(REQUEST, False, ReplicaAssignment((1, 2))).reason == (
        "its replicas are [1,2], not the target [3,1]"
    )
    assert reassignment_status(REQUEST, False, None).reason == "the partition does not exist"


@pytest.mark.parametrize(
    ("statuses", "code"),
    [
        ([COMPLETE, COMPLETE], 0),
        ([COMPLETE, IN_PROGRESS], 3),
        ([IN_PROGRESS, FAILED], 1),
        ([COMPLETE, FAILED], 1),
        ([], 0),
    ],
)
def test_verification_exit_code(statuses: list[ReassignmentStatus], code: int) -> None:
    assert verification_exit_code(PartitionStatus(T0, s) for s in statuses) == code


class FakeTime:
    """A clock that only `sleep` moves forward."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_waiting_stops_once_nothing_is_in_progress_and_reports_changes() -> None:
    readings = iter(
        [
            (PartitionStatus(T0, IN_PROGRESS), PartitionStatus(T1, IN_PROGRESS)),
            (PartitionStatus(T0, IN_PROGRESS), PartitionStatus(T1, IN_PROGRESS)),
            (PartitionStatus(T0, COMPLETE), PartitionStatus(T1, IN_PROGRESS)),
            (PartitionStatus(T0, COMPLETE), PartitionStatus(T1, FAILED, "x")),
        ]
    )
    time = FakeTime()
    progress: list[tuple[int, int]] = []
    statuses = wait_for_reassignment(
        lambda: next(readings),
        10.0,
        lambda done, total: progress.append((done, total)),
        time.sleep,
        lambda: time.now,
    )
    assert [s.status for s in statuses] == [COMPLETE, FAILED]
    assert progress == [(0, 2), (1, 2)]
    assert time.sleeps == [0.5, 0.5, 0.5]


def test_waiting_gives_up_at_the_deadline() -> None:
    time = FakeTime()
    checks = 0

    def check() -> tuple[PartitionStatus, ...]:
        nonlocal checks
        checks += 1
        return (PartitionStatus(T0, IN_PROGRESS),)

    statuses = wait_for_reassignment(check, 1.2, lambda _d, _t: None, time.sleep, lambda: time.now)
    assert statuses[0].status is IN_PROGRESS
    assert time.sleeps == pytest.approx([0.5, 0.5, 0.2])
    assert checks == 4


def test_verification_output() -> None:
    statuses = [
        PartitionStatus(T0, COMPLETE),
        PartitionStatus(T1, IN_PROGRESS),
        PartitionStatus(U0, FAILED, "the partition does not exist"),
    ]
    assert render_verification(statuses).splitlines() == [
        "Reassignment of partition t-0 is complete.",
        "Reassignment of partition t-1 is still in progress.",
        "Reassignment of partition u-0 failed: the partition does not exist.",
    ]
