"""Invariant 6 over hand-made cluster snapshots: what a converged cluster looks like, each
way a snapshot can fall short, the time to convergence and the bound."""

from __future__ import annotations

import dataclasses

import pytest

from domain import TopicPartition
from rundir.invariants import (
    BrokerView,
    ClusterSnapshot,
    PartitionState,
    ViewedPartition,
    converges_after_heal,
    problems,
    time_to_convergence,
)

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)


def _converged(after_heal_ms: int = 0) -> ClusterSnapshot:
    partitions = {
        T0: PartitionState(1, (1, 2, 3), (1, 2, 3)),
        T1: PartitionState(2, (2, 3, 1), (2, 3, 1)),
    }
    view = BrokerView(1, {tp: ViewedPartition(s.leader, s.isr) for tp, s in partitions.items()})
    return ClusterSnapshot(
        after_heal_ms=after_heal_ms,
        controller_id=1,
        controller_epoch=4,
        live_brokers=frozenset({1, 2, 3}),
        partitions=partitions,
        metadata={1: view, 2: view, 3: view},
        active_controllers=frozenset({1}),
    )


def _with_view(snapshot: ClusterSnapshot, broker: int, view: BrokerView | None) -> ClusterSnapshot:
    return dataclasses.replace(snapshot, metadata={**snapshot.metadata, broker: view})


def test_a_converged_snapshot_has_no_problem() -> None:
    assert problems(_converged()) == ()


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"controller_id": None}, "no controller"),
        ({"controller_id": 4}, "controller 4 is not a live broker"),
        ({"active_controllers": frozenset({1, 2})}, "brokers [1, 2] report an active controller"),
        ({"live_brokers": frozenset({2, 3, 1, 9})}, "broker 9 gave no metadata"),
    ],
)
def test_the_controller_and_the_brokers_must_agree(change: dict[str, object], problem: str) -> None:
    snapshot = dataclasses.replace(_converged(), **change)  # type: ignore[arg-type]
    assert problem in problems(snapshot)


def test_a_partition_without_a_live_leader_or_a_full_isr_is_named() -> None:
    snapshot = _converged()
    partitions = {**snapshot.partitions, T0: PartitionState(5, (1, 2), (1, 2, 3))}
    found = problems(dataclasses.replace(snapshot, partitions=partitions))
    assert "t-0 has no live leader (leader 5)" in found
    assert "t-0 ISR [1, 2] is not its replicas [1, 2, 3]" in found


def test_a_broker_whose_metadata_differs_from_zookeeper_is_named() -> None:
    snapshot = _converged()
    stale = BrokerView(
        2, {T0: ViewedPartition(3, (1, 2, 3)), TopicPartition("gone", 0): ViewedPartition(1, (1,))}
    )
    found = problems(_with_view(snapshot, 3, stale))
    assert found == (
        "broker 3 names controller 2",
        "broker 3 sees t-0 led by 3 with ISR [1, 2, 3], ZooKeeper 1 with [1, 2, 3]",
        "broker 3 does not know t-1",
        "broker 3 knows gone-0, which ZooKeeper does not",
    )


def _with_epochs(snapshot: ClusterSnapshot, zookeeper: int, seen: int | None) -> ClusterSnapshot:
    """`snapshot` with t-0 at leader epoch `zookeeper` in ZooKeeper and `seen` in broker 2's
    metadata (every other broker sees `zookeeper`)."""
    state = dataclasses.replace(snapshot.partitions[T0], leader_epoch=zookeeper)
    views = {}
    for broker, view in snapshot.metadata.items():
        assert view is not None
        epoch = seen if broker == 2 else zookeeper
        viewed = dataclasses.replace(view.partitions[T0], leader_epoch=epoch)
        views[broker] = BrokerView(view.controller_id, {**view.partitions, T0: viewed})
    partitions = {**snapshot.partitions, T0: state}
    return dataclasses.replace(snapshot, partitions=partitions, metadata=views)


def test_a_broker_at_another_leader_epoch_than_zookeeper_is_named() -> None:
    """A reassignment's bumped epoch that never reached the metadata (`kafka-9212`)."""
    assert problems(_with_epochs(_converged(), 7, 7)) == ()
    found = problems(_with_epochs(_converged(), 7, 6))
    assert found == ("broker 2 sees t-0 at leader epoch 6, ZooKeeper at 7",)


def test_a_leader_epoch_known_on_one_side_only_is_not_compared() -> None:
    """Snapshots written before leader epochs were recorded hold none."""
    assert problems(_with_epochs(_converged(), 7, None)) == ()


def test_time_to_convergence_is_the_first_converged_snapshot_after_the_heal() -> None:
    unconverged = dataclasses.replace(_converged(), controller_id=None)
    series = [
        _converged(-500),  # before the heal: does not count
        dataclasses.replace(unconverged, after_heal_ms=100),
        _converged(900),
        _converged(1500),
    ]
    assert time_to_convergence(series) == 900
    assert time_to_convergence(series[:2]) is None


def test_converging_within_the_bound_holds() -> None:
    series = [dataclasses.replace(_converged(100), controller_id=None), _converged(900)]
    result = converges_after_heal(series, bound_ms=1000)
    assert result.ok
    assert result.checked == 2
    assert result.note == "converged 900 ms after the heal"


def test_converging_late_names_the_last_unconverged_snapshot_s_problems() -> None:
    late = dataclasses.replace(_converged(800), controller_id=None)
    series = [_converged(-10), late, _converged(2000)]
    result = converges_after_heal(series, bound_ms=1000)
    assert {v.subject for v in result.violations} == {"snapshot at +800 ms"}
    assert [v.explanation for v in result.violations][:2] == [
        "no controller (converged only after 2000 ms; bound 1000 ms)",
        "brokers [1] report an active controller (converged only after 2000 ms; bound 1000 ms)",
    ]


def test_never_converging_is_a_violation() -> None:
    stuck = _with_view(_converged(3000), 2, None)
    result = converges_after_heal([stuck], bound_ms=1000)
    assert [v.explanation for v in result.violations] == [
        "broker 2 gave no metadata (never converged; bound 1000 ms)"
    ]


def test_a_first_snapshot_after_the_bound_cannot_show_convergence_in_time() -> None:
    result = converges_after_heal([_converged(5000)], bound_ms=1000)
    assert not result.ok
    assert result.violations[0].subject == "snapshot at +5000 ms"


def test_without_snapshots_after_the_heal_nothing_is_judged() -> None:
    result = converges_after_heal([_converged(-1)], bound_ms=1000)
    assert not result.judged


def test_a_snapshot_survives_its_json_form() -> None:
    snapshot = _with_view(_converged(), 3, None)
    assert ClusterSnapshot.from_json(snapshot.to_json()) == snapshot
    with_epochs = _with_epochs(_converged(), 7, 6)
    assert ClusterSnapshot.from_json(with_epochs.to_json()) == with_epochs


def test_a_malformed_snapshot_is_a_clear_error() -> None:
    record = _converged().to_json()
    del record["live_brokers"]
    with pytest.raises(ValueError, match=r"not a cluster snapshot.*live_brokers"):
        ClusterSnapshot.from_json(record)
