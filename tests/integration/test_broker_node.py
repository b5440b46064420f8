"""A `BrokerNode` run in-process against the real ensemble, so that its ZooKeeper session
can be expired with the harness (kazoo's way: a second client on the same session id)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from broker_node.broker_state import BrokerState
from broker_node.config import BrokerConfig
from broker_node.node import BrokerNode
from controller.events import ControllerEvent
from eventlog import event_log_path, read_events
from harness.waiting import wait_until
from harness.zk_ensemble import expire_session
from rpc.errors import Errors
from rpc.messages import ControlledShutdownRequest, ControlledShutdownResponse
from rpc.wire import BrokerControlClient
from zkdata import paths
from zkdata.client import KafkaZkClient

pytestmark = pytest.mark.integration


@pytest.fixture
def node(zk_connect: str, run_dir: Path) -> Iterator[BrokerNode]:
    """Broker 1, started in this process, stopped after the test."""
    broker = BrokerNode(
        BrokerConfig(
            broker_id=1,
            zk_connect=zk_connect,
            zk_session_timeout_ms=3000,
            listen_host="127.0.0.1",
            port=0,
            advertised_host="127.0.0.1",
            run_dir=run_dir,
            metrics_port=None,
        )
    )
    broker.start()
    yield broker
    broker.stop()


def kinds(run_dir: Path) -> list[str]:
    """The kinds of broker 1's events, in order."""
    return [e["kind"] for e in read_events(event_log_path(run_dir, "broker1"))]


def test_expired_session_reregisters_and_wins_the_election_again(
    node: BrokerNode, zk_client: KazooClient, run_dir: Path
) -> None:
    """After its session expires the broker resigns, registers again under the new session
    with a larger broker epoch, and (alone) becomes controller at the next epoch."""
    zk = KafkaZkClient(zk_client)
    wait_until(lambda: zk.get_controller_id() == 1, 15, "broker 1 did not become controller")
    epoch_before = node.broker_epoch
    controller_epoch = zk.get_controller_epoch()
    assert controller_epoch is not None
    expire_session(node.zk.kazoo)
    wait_until(
        lambda: node.broker_epoch > epoch_before,
        15,
        lambda: f"no re-registration; events: {kinds(run_dir)}",
    )
    registration = zk.get_broker(1)
    assert registration is not None
    assert registration.epoch == node.broker_epoch
    wait_until(
        lambda: (
            (e := zk.get_controller_epoch()) is not None and e.epoch == controller_epoch.epoch + 1
        ),
        15,
        "broker 1 did not win the election again",
    )
    assert zk.get_controller_id() == 1
    sequence = kinds(run_dir)
    assert sequence.index("controller_resigned") < len(sequence) - 1
    assert sequence.count("controller_elected") == 2
    assert sequence.count("broker_registered") == 2


def test_a_malformed_controller_znode_is_reported_and_the_broker_keeps_running(
    node: BrokerNode, zk_client: KazooClient, run_dir: Path
) -> None:
    """Garbage in /controller (held by an outside session) is logged as malformed_znode;
    the broker keeps serving and takes over once the bad node is gone."""
    zk = KafkaZkClient(zk_client)
    wait_until(lambda: zk.get_controller_id() == 1, 15, "broker 1 did not become controller")
    swap = zk_client.transaction()  # atomically: the broker never sees a free /controller
    swap.delete(paths.CONTROLLER)
    swap.create(paths.CONTROLLER, b"\xff not json", ephemeral=True)
    assert all(result is True or isinstance(result, str) for result in swap.commit())
    wait_until(
        lambda: "malformed_znode" in kinds(run_dir),
        15,
        lambda: f"no malformed_znode event; events: {kinds(run_dir)}",
    )
    assert node.controller is not None
    assert not node.controller.is_active
    zk_client.delete(paths.CONTROLLER)
    wait_until(lambda: zk.get_controller_id() == 1, 15, "broker 1 did not take over again")
    assert node.controller.is_active


@dataclass(frozen=True)
class _Block(ControllerEvent):
    """An event the test holds on the event thread."""


def test_preemption_answers_queued_callers_that_the_controller_moved(
    node: BrokerNode, zk_client: KazooClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ControlledShutdown queued behind a busy event is preempted when the session
    expires (Expire clears the queue): its caller hears NOT_CONTROLLER at once."""
    zk = KafkaZkClient(zk_client)
    wait_until(lambda: zk.get_controller_id() == 1, 15, "broker 1 did not become controller")
    controller = node.controller
    assert controller is not None
    entered, release = threading.Event(), threading.Event()
    dispatch = controller._dispatch

    def held(event: ControllerEvent) -> None:
        if isinstance(event, _Block):
            entered.set()
            release.wait(30)
        dispatch(event)

    monkeypatch.setattr(controller, "_dispatch", held)
    controller.event_manager.put(_Block())
    assert entered.wait(10)
    answers: list[ControlledShutdownResponse] = []

    def ask() -> None:
        with BrokerControlClient(f"127.0.0.1:{node.port}", timeout_s=30) as client:
            answers.append(
                client.controlled_shutdown(ControlledShutdownRequest(1, node.broker_epoch))
            )

    caller = threading.Thread(target=ask, name="test-controlled-shutdown-caller")
    caller.start()
    try:
        wait_until(
            lambda: controller.event_manager.queue_size() >= 1, 10, "the request was not queued"
        )
        expire_session(node.zk.kazoo)
        caller.join(15)
        assert not caller.is_alive(), "the queued caller was not answered"
    finally:
        release.set()
    assert [a.error for a in answers] == [Errors.NOT_CONTROLLER]


def test_a_broker_goes_through_kafkas_states(
    node: BrokerNode, zk_client: KazooClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Running once started, RunningAsController while it is the active controller, then
    PendingControlledShutdown, BrokerShuttingDown and NotRunning as it stops; a second
    stop (the fixture's) moves nothing."""
    assert node.state.state is BrokerState.RUNNING_AS_BROKER
    controller = node.controller
    assert controller is not None
    wait_until(lambda: controller.is_active, 15, "broker 1 did not become controller")
    assert node.state.reported(controller.is_active) is BrokerState.RUNNING_AS_CONTROLLER
    moves: list[BrokerState] = []
    become = node.state.become

    def recording(state: BrokerState) -> None:
        become(state)
        moves.append(state)

    monkeypatch.setattr(node.state, "become", recording)
    node.stop()
    assert moves == [
        BrokerState.PENDING_CONTROLLED_SHUTDOWN,
        BrokerState.BROKER_SHUTTING_DOWN,
        BrokerState.NOT_RUNNING,
    ]
    assert KafkaZkClient(zk_client).get_broker(1) is None
