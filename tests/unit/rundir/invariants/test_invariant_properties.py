"""Properties of invariants 1-4 over logs simulated from a consistent cluster: controller
elections with growing epochs, brokers restarting and registering with growing epochs,
requests from the current controller to current registrations, and leader elections and
ISR changes written in zkVersion order. Such logs never break the invariants; a second
leader written at an existing leader epoch, or a second broker elected at an existing
controller epoch, always does, and the violation names the added event."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from eventlog import (
    BrokerRegistered,
    ControllerElected,
    ControllerResigned,
    NodeStarted,
    RequestAccepted,
)
from rundir.events import Event
from rundir.invariants import (
    broker_epoch_fencing,
    controller_epoch_fencing,
    one_controller_per_epoch,
    one_leader_per_leader_epoch,
)
from rundir.invariants.testing import EventLogBuilder

PROPERTY = settings(max_examples=150, deadline=None)
BROKERS = (1, 2, 3)
PARTITIONS = (0, 1)

steps = st.lists(
    st.tuples(
        st.sampled_from(["elect_controller", "restart", "request", "elect_leader", "isr"]),
        st.sampled_from(BROKERS),
        st.sampled_from(PARTITIONS),
    ),
    max_size=60,
)


@dataclass
class _Cluster:
    """A correct cluster, replayed into an `EventLogBuilder`."""

    b: EventLogBuilder = field(default_factory=EventLogBuilder)
    zxid: int = 100
    controller: int | None = None
    controller_epoch: int = 0
    registrations: dict[int, int] = field(default_factory=dict)
    leaders: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # leader, epoch, zkv

    def start(self) -> None:
        for broker in BROKERS:
            self.restart(broker)
        for p in PARTITIONS:
            self.leaders[p] = (1, 0, 0)
            self._leader_elected(p, 1, 0, 0, "initial")

    def restart(self, broker: int) -> None:
        node = f"broker{broker}"
        if self.controller == broker:
            self.controller = None  # killed: no resignation is logged
        self.b.emit(node, NodeStarted(broker_id=broker, zk_connect="zk"))
        self.zxid += 1
        self.b.emit(
            node,
            BrokerRegistered(
                broker_id=broker,
                broker_epoch=self.zxid,
                previous_broker_epoch=-1,
                reregistration=False,
                session_id="0x1",
            ),
        )
        self.registrations[broker] = self.zxid

    def elect_controller(self, broker: int) -> None:
        if self.controller is not None:
            self.b.emit(
                f"broker{self.controller}",
                ControllerResigned(
                    controller_id=self.controller,
                    controller_epoch=self.controller_epoch,
                    reason="test",
                ),
            )
        self.controller_epoch += 1
        self.controller = broker
        self.b.emit(
            f"broker{broker}",
            ControllerElected(
                controller_id=broker,
                controller_epoch=self.controller_epoch,
                epoch_zk_version=self.controller_epoch,
                epoch_zxid=None,
            ),
        )

    def request(self, broker: int) -> None:
        if self.controller is None:
            return
        epoch = self.registrations[broker]
        self.b.emit(
            f"broker{broker}",
            RequestAccepted(
                api="LeaderAndIsr",
                controller_id=self.controller,
                controller_epoch=self.controller_epoch,
                request_broker_epoch=epoch,
                broker_epoch=epoch,
                partitions=1,
                partition_errors=0,
            ),
        )

    def elect_leader(self, broker: int, partition: int) -> None:
        if self.controller is None:
            return
        _, epoch, version = self.leaders[partition]
        self.leaders[partition] = (broker, epoch + 1, version + 1)
        self._leader_elected(partition, broker, epoch + 1, version + 1, "offline")

    def isr(self, partition: int) -> None:
        leader, epoch, version = self.leaders[partition]
        self.leaders[partition] = (leader, epoch, version + 1)
        self.b.leader_isr_changed(f"broker{leader}", partition, leader, epoch, version + 1)

    def _leader_elected(
        self, partition: int, leader: int, epoch: int, version: int, strategy: str
    ) -> Event:
        node = f"broker{self.controller or 1}"
        return self.b.leader_elected(
            node,
            partition,
            leader,
            epoch,
            version,
            strategy=strategy,
            controller_epoch=self.controller_epoch,
        )


def _simulate(plan: list[tuple[str, int, int]]) -> _Cluster:
    cluster = _Cluster()
    cluster.start()
    for action, broker, partition in plan:
        if action == "elect_controller":
            cluster.elect_controller(broker)
        elif action == "restart":
            cluster.restart(broker)
        elif action == "request":
            cluster.request(broker)
        elif action == "elect_leader":
            cluster.elect_leader(broker, partition)
        else:
            cluster.isr(partition)
    return cluster


@PROPERTY
@given(steps)
def test_a_consistent_cluster_breaks_no_invariant(plan: list[tuple[str, int, int]]) -> None:
    logs = _simulate(plan).b.logs()
    for check in (
        one_controller_per_epoch,
        controller_epoch_fencing,
        broker_epoch_fencing,
        one_leader_per_leader_epoch,
    ):
        result = check(logs)
        assert result.ok, (result.name, result.violations)


@PROPERTY
@given(steps, st.sampled_from(PARTITIONS), st.sampled_from(BROKERS))
def test_a_second_leader_at_a_written_epoch_is_named(
    plan: list[tuple[str, int, int]], partition: int, other: int
) -> None:
    cluster = _simulate(plan)
    leader, epoch, version = cluster.leaders[partition]
    intruder = 1 + other % 3 if other == leader else other
    added = cluster.b.leader_isr_changed("broker9", partition, intruder, epoch, version + 1)
    violations = one_leader_per_leader_epoch(cluster.b.logs()).violations
    assert any(added in v.events for v in violations)


@PROPERTY
@given(steps.filter(lambda p: any(a == "elect_controller" for a, _, _ in p)))
def test_a_second_broker_at_a_won_controller_epoch_is_named(
    plan: list[tuple[str, int, int]],
) -> None:
    cluster = _simulate(plan)
    assert cluster.controller_epoch > 0
    added = cluster.b.emit(
        "broker9",
        ControllerElected(
            controller_id=9,
            controller_epoch=cluster.controller_epoch,
            epoch_zk_version=cluster.controller_epoch,
            epoch_zxid=None,
        ),
    )
    violations = one_controller_per_epoch(cluster.b.logs()).violations
    assert any(added in v.events for v in violations)
