"""`BrokerState` with Kafka's values and the moves of a broker's life, and the Prometheus
endpoint's figures under Kafka's names: `kafka_server_KafkaServer_BrokerState` (4 on the
active controller, as the seeds' Kafka reports it) and KIP-503's deletion gauges."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest
from prometheus_client.core import CollectorRegistry

from broker_node.broker_state import BrokerState, BrokerStateTracker
from broker_node.metrics import BrokerCollector
from controller.context import ControllerContext
from controller.metrics import ControllerMetrics
from controller.states import ControllerState
from zkdata.model import ReplicaAssignment

LIFE = [
    BrokerState.STARTING,
    BrokerState.RUNNING_AS_BROKER,
    BrokerState.PENDING_CONTROLLED_SHUTDOWN,
    BrokerState.BROKER_SHUTTING_DOWN,
    BrokerState.NOT_RUNNING,
]


def test_kafkas_values() -> None:
    assert {s.name: int(s) for s in BrokerState} == {
        "NOT_RUNNING": 0,
        "STARTING": 1,
        "RECOVERING_FROM_UNCLEAN_SHUTDOWN": 2,
        "RUNNING_AS_BROKER": 3,
        "RUNNING_AS_CONTROLLER": 4,
        "PENDING_CONTROLLED_SHUTDOWN": 6,
        "BROKER_SHUTTING_DOWN": 7,
    }


def test_a_broker_lives_through_kafkas_states() -> None:
    tracker = BrokerStateTracker()
    assert tracker.state is BrokerState.NOT_RUNNING
    for state in LIFE:
        tracker.become(state)
        assert tracker.state is state


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        pytest.param([], BrokerState.RUNNING_AS_BROKER, id="running-before-starting"),
        pytest.param(
            LIFE[:1], BrokerState.PENDING_CONTROLLED_SHUTDOWN, id="pending-while-starting"
        ),
        pytest.param(LIFE[:2], BrokerState.STARTING, id="starting-again-while-running"),
        pytest.param(LIFE[:4], BrokerState.RUNNING_AS_BROKER, id="running-while-shutting-down"),
        pytest.param(LIFE[:2], BrokerState.RUNNING_AS_CONTROLLER, id="controller-is-derived"),
    ],
)
def test_moves_kafkas_broker_never_makes_are_refused(
    path: list[BrokerState], refused: BrokerState
) -> None:
    tracker = BrokerStateTracker()
    for state in path:
        tracker.become(state)
    with pytest.raises(ValueError, match="does not go from"):
        tracker.become(refused)
    assert tracker.state is (path[-1] if path else BrokerState.NOT_RUNNING)


def test_running_as_controller_is_reported_only_while_running_and_active() -> None:
    tracker = BrokerStateTracker()
    tracker.become(BrokerState.STARTING)
    assert tracker.reported(controller_active=True) is BrokerState.STARTING
    tracker.become(BrokerState.RUNNING_AS_BROKER)
    assert tracker.reported(controller_active=False) is BrokerState.RUNNING_AS_BROKER
    assert tracker.reported(controller_active=True) is BrokerState.RUNNING_AS_CONTROLLER
    tracker.become(BrokerState.PENDING_CONTROLLED_SHUTDOWN)
    assert tracker.reported(controller_active=True) is BrokerState.PENDING_CONTROLLED_SHUTDOWN


def scrape(active: bool, tracker: BrokerStateTracker, metrics: ControllerMetrics) -> Any:
    """A registry over one broker's collector, with a controller and replicas that hold
    nothing but `metrics`."""
    controller = SimpleNamespace(
        metrics=metrics,
        event_manager=SimpleNamespace(state=ControllerState.IDLE, queue_size=lambda: 0),
        active=None,
        is_active=active,
    )
    sessions = SimpleNamespace(sessions=0, partitions=0, evictions=0)
    replicas = SimpleNamespace(
        partitions=lambda: [], fetch_sessions=SimpleNamespace(figures=lambda: sessions)
    )
    registry = CollectorRegistry(auto_describe=False)
    registry.register(BrokerCollector(cast(Any, controller), cast(Any, replicas), tracker))
    return registry


def test_the_endpoint_reports_broker_state_and_deletion_gauges_by_kafkas_names() -> None:
    tracker = BrokerStateTracker()
    tracker.become(BrokerState.STARTING)
    tracker.become(BrokerState.RUNNING_AS_BROKER)
    ctx = ControllerContext()
    ctx.add_topic("gone", {0: ReplicaAssignment((1, 2))})
    ctx.queue_topic_deletion(["gone"])
    metrics = ControllerMetrics()
    metrics.publish(True, ctx, ["gone"])
    registry = scrape(True, tracker, metrics)
    value = registry.get_sample_value
    assert value("kafka_server_KafkaServer_BrokerState") == 4
    assert value("kafka_controller_KafkaController_TopicsToDeleteCount") == 1
    assert value("kafka_controller_KafkaController_ReplicasToDeleteCount") == 2
    assert value("kafka_controller_KafkaController_TopicsIneligibleToDeleteCount") == 1
    assert value("kafka_controller_KafkaController_ReplicasIneligibleToDeleteCount") == 0
    assert scrape(False, tracker, metrics).get_sample_value(
        "kafka_server_KafkaServer_BrokerState"
    ) == int(BrokerState.RUNNING_AS_BROKER)
