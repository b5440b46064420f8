"""Controller election, failover and broker-side fencing on a real ZooKeeper ensemble with
brokers as local processes.

Setup: a fresh chroot per test on the shared 3-server ensemble; brokers 1-3 as processes
with 3 s sessions. Validation reads ZooKeeper, the brokers' event logs, and the answers of
the brokers' gRPC control service.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from kazoo.client import KazooClient

from domain import UNKNOWN_BROKER_EPOCH
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from harness.zk_ensemble import ZkEnsemble
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import BrokerControlClient
from zkdata import paths
from zkdata.client import KafkaZkClient

pytestmark = pytest.mark.integration

SESSION_MS = 3000
ZOMBIE = 99  # the controller id of requests sent by the tests themselves
Start = Callable[..., BrokerProcess]


def start_cluster(brokers: Start, zk_client: KazooClient, n: int = 3) -> list[BrokerProcess]:
    """Start brokers 1..n and wait until all are registered and one is controller."""
    procs = [brokers(i, SESSION_MS) for i in range(1, n + 1)]
    zk = KafkaZkClient(zk_client)
    wait_until(
        lambda: (
            zk_client.exists(paths.BROKER_IDS)
            and len(zk.get_all_brokers().brokers) == n
            and zk.get_controller_id() is not None
            and all(p.port() for p in procs)
        ),
        30,
        lambda: "cluster did not form:\n" + "\n".join(p.log_tail(10) for p in procs),
    )
    return procs


def elected(proc: BrokerProcess) -> list[dict[str, object]]:
    """The controller_elected events of one broker."""
    return [e for e in proc.events() if e["kind"] == "controller_elected"]


def header(controller_epoch: int, broker_epoch: int, controller_id: int = 1) -> m.ControlHeader:
    """A control request header."""
    return m.ControlHeader(controller_id, controller_epoch, broker_epoch)


def partition_state(leader_epoch: int, replicas: tuple[int, ...]) -> m.LeaderAndIsrPartitionState:
    """A LeaderAndIsr partition state for topic `t`, partition 0."""
    return m.LeaderAndIsrPartitionState(
        topic="t",
        partition=0,
        controller_epoch=1,
        leader=replicas[0],
        leader_epoch=leader_epoch,
        isr=replicas,
        zk_version=0,
        replicas=replicas,
    )


def test_exactly_one_controller_among_three_brokers(brokers: Start, zk_client: KazooClient) -> None:
    """Three brokers race for /controller: exactly one wins, at controller epoch 1."""
    procs = start_cluster(brokers, zk_client)
    zk = KafkaZkClient(zk_client)
    controller_id = zk.get_controller_id()
    epoch = zk.get_controller_epoch()
    assert epoch is not None
    assert epoch.epoch == 1
    winners = wait_until(
        lambda: [p.broker_id for p in procs if elected(p)] or None, 10, "no election event"
    )
    assert winners == [controller_id]
    assert elected(procs[winners[0] - 1])[0]["controller_epoch"] == 1
    registrations = zk.get_all_brokers().brokers
    assert sorted(registrations) == [1, 2, 3]
    assert len({b.epoch for b in registrations.values()}) == 3  # czxids are distinct


def test_killing_the_controller_elects_another_with_the_next_epoch(
    brokers: Start, zk_client: KazooClient
) -> None:
    """kill -9 of the controller: another broker wins with epoch + 1 within the session
    timeout + 2 s; the new controller is registered in /controller."""
    procs = start_cluster(brokers, zk_client)
    zk = KafkaZkClient(zk_client)
    old = zk.get_controller_id()
    old_epoch = zk.get_controller_epoch()
    assert old is not None
    assert old_epoch is not None
    killed_at = time.monotonic()
    procs[old - 1].kill()
    new = wait_until(
        lambda: (c := zk.get_controller_id()) is not None and c != old and c,
        SESSION_MS / 1000 + 2,
        "no new controller within session timeout + 2 s",
    )
    took = time.monotonic() - killed_at
    new_epoch = zk.get_controller_epoch()
    assert new_epoch is not None
    assert new_epoch.epoch == old_epoch.epoch + 1
    assert new in {1, 2, 3} - {old}
    event = wait_until(lambda: elected(procs[new - 1]), 5, "new controller logged no election")
    assert event[-1]["controller_epoch"] == old_epoch.epoch + 1
    assert took <= SESSION_MS / 1000 + 2


def test_request_with_an_older_controller_epoch_is_rejected_with_11(
    brokers: Start, zk_client: KazooClient
) -> None:
    """A broker that obeyed controller epoch E rejects E-1 with STALE_CONTROLLER_EPOCH and
    applies none of it; the rejection is in its event log."""
    procs = start_cluster(brokers, zk_client)
    target = procs[0]
    port = target.port()
    zk = KafkaZkClient(zk_client)
    broker = zk.get_broker(1)
    assert broker is not None
    assert port is not None
    with BrokerControlClient(f"127.0.0.1:{port}") as client:
        fresh = client.update_metadata(
            m.UpdateMetadataRequest(header(5, broker.epoch, ZOMBIE), (), ())
        )
        assert fresh.error is Errors.NONE
        stale = client.leader_and_isr(
            m.LeaderAndIsrRequest(header(4, broker.epoch, ZOMBIE), (partition_state(1, (1, 2)),))
        )
        assert stale.error is Errors.STALE_CONTROLLER_EPOCH
        assert int(stale.error) == 11
        assert [e.error for e in stale.partition_errors] == [Errors.STALE_CONTROLLER_EPOCH]
        # The fenced request left no trace: the same leader epoch is still new.
        same = client.leader_and_isr(
            m.LeaderAndIsrRequest(header(5, broker.epoch, ZOMBIE), (partition_state(1, (1, 2)),))
        )
        assert same.error is Errors.NONE
        assert [e.error for e in same.partition_errors] == [Errors.NONE]
        replay = client.leader_and_isr(
            m.LeaderAndIsrRequest(header(5, broker.epoch, ZOMBIE), (partition_state(1, (1, 2)),))
        )
        assert [e.error for e in replay.partition_errors] == [Errors.STALE_CONTROLLER_EPOCH]
    rejected = [
        e
        for e in target.events()
        if e["kind"] == "request_rejected" and e["controller_id"] == ZOMBIE
    ]
    assert [(e["api"], e["error_code"], e["controller_epoch"]) for e in rejected] == [
        ("LeaderAndIsr", 11, 4)
    ]


def test_bounced_broker_has_a_larger_epoch_and_rejects_its_old_one_with_77(
    brokers: Start, zk_client: KazooClient
) -> None:
    """A broker restarted under the same id registers with a larger czxid; a request that
    carries its previous broker epoch is rejected with STALE_BROKER_EPOCH."""
    procs = start_cluster(brokers, zk_client)
    zk = KafkaZkClient(zk_client)
    before = zk.get_broker(2)
    assert before is not None
    bounced = procs[1]
    assert bounced.terminate() == 0
    assert zk.get_broker(2) is None  # a clean stop removes the registration at once
    bounced.start()
    after = wait_until(
        lambda: (b := zk.get_broker(2)) is not None and bounced.port() is not None and b,
        20,
        lambda: "broker 2 did not come back:\n" + bounced.log_tail(),
    )
    assert after.epoch > before.epoch
    controller_epoch = zk.get_controller_epoch()
    assert controller_epoch is not None
    epoch = controller_epoch.epoch
    with BrokerControlClient(f"127.0.0.1:{bounced.port()}") as client:
        old = client.update_metadata(m.UpdateMetadataRequest(header(epoch, before.epoch), (), ()))
        assert old.error is Errors.STALE_BROKER_EPOCH
        assert int(old.error) == 77
        unknown = client.update_metadata(
            m.UpdateMetadataRequest(header(epoch, UNKNOWN_BROKER_EPOCH), (), ())
        )
        assert unknown.error is Errors.NONE
        current = client.update_metadata(
            m.UpdateMetadataRequest(header(epoch, after.epoch), (), ())
        )
        assert current.error is Errors.NONE


def test_expired_session_reregisters_with_a_new_broker_epoch(
    brokers: Start, zk_client: KazooClient
) -> None:
    """A broker frozen past its session timeout loses its registration; when it runs again
    it re-registers under a new session, with a larger broker epoch."""
    procs = start_cluster(brokers, zk_client)
    zk = KafkaZkClient(zk_client)
    controller_id = zk.get_controller_id()
    frozen = next(p for p in procs if p.broker_id != controller_id)
    before = zk.get_broker(frozen.broker_id)
    assert before is not None
    frozen.pause()
    try:
        wait_until(
            lambda: zk.get_broker(frozen.broker_id) is None,
            SESSION_MS / 1000 + 5,
            "the frozen broker's registration did not expire",
        )
    finally:
        frozen.resume()
    after = wait_until(
        lambda: zk.get_broker(frozen.broker_id),
        SESSION_MS / 1000 + 10,
        lambda: "no re-registration:\n" + frozen.log_tail(),
    )
    assert after.epoch > before.epoch
    registered = [e for e in frozen.events() if e["kind"] == "broker_registered"]
    assert registered[-1]["reregistration"] is True
    assert registered[-1]["broker_epoch"] == after.epoch
    assert registered[-1]["previous_broker_epoch"] == before.epoch
    assert zk.get_controller_id() == controller_id  # a follower's expiry moves nothing


def test_frozen_controller_is_replaced_and_resigns_when_it_wakes(
    brokers: Start, zk_client: KazooClient
) -> None:
    """The controller frozen past its session: another broker takes over at epoch + 1; the
    old one, on waking, sees its session expired, resigns and re-registers. It is frozen
    once its failover is done, so that it wakes as a controller at rest (frozen in the
    middle of its failover, it resigns with that failover's error instead)."""
    procs = start_cluster(brokers, zk_client)
    zk = KafkaZkClient(zk_client)
    old = zk.get_controller_id()
    epoch = zk.get_controller_epoch()
    assert old is not None
    assert epoch is not None
    frozen = procs[old - 1]
    wait_until(
        lambda: any(e["kind"] == "controller_failover_done" for e in frozen.events()),
        20,
        lambda: "the first controller's failover did not finish:\n" + frozen.log_tail(),
    )
    frozen.pause()
    try:
        new = wait_until(
            lambda: (c := zk.get_controller_id()) is not None and c != old and c,
            SESSION_MS / 1000 + 5,
            "no new controller while the old one was frozen",
        )
    finally:
        frozen.resume()
    new_epoch = zk.get_controller_epoch()
    assert new_epoch is not None
    assert new_epoch.epoch == epoch.epoch + 1
    resigned = wait_until(
        lambda: [e for e in frozen.events() if e["kind"] == "controller_resigned"],
        10,
        lambda: "old controller did not resign:\n" + frozen.log_tail(),
    )
    assert resigned[0]["reason"] in (
        "its ZooKeeper session expired",
        f"/controller names broker {new}",
    ), resigned
    wait_until(lambda: zk.get_broker(old), 15, "old controller did not re-register")
    assert zk.get_controller_id() == new


def test_broker_whose_connection_dropped_still_takes_over_the_controller(
    brokers: Start, zk_client: KazooClient, zk_ensemble: ZkEnsemble, zk_chroot: str
) -> None:
    """A broker pinned to one ZooKeeper server loses its connection (the server is killed
    and restarted) but keeps its session; when the controller dies afterwards, it must
    still notice `/controller` vanish and take over (its watch is re-armed)."""
    zk = KafkaZkClient(zk_client)
    first = brokers(1, SESSION_MS)
    wait_until(lambda: zk.get_controller_id() == 1, 30, lambda: first.log_tail())
    pinned_server = 2
    pinned = brokers(2, 15000, zk_ensemble.connect_string(zk_chroot, members=[pinned_server]))
    wait_until(
        lambda: any(e["kind"] == "controller_observed" for e in pinned.events()),
        30,
        lambda: "broker 2 did not start:\n" + pinned.log_tail(),
    )
    session = zk.get_broker(2)
    assert session is not None
    zk_ensemble.kill_server(pinned_server)
    try:
        wait_until(
            lambda: any(e.get("state") == "suspended" for e in pinned.events()),
            15,
            "broker 2 did not notice its server going away",
        )
    finally:
        zk_ensemble.start_server(pinned_server)
    states = wait_until(
        lambda: (
            (s := [e["state"] for e in pinned.events() if e["kind"] == "zk_session_state"])
            and s[-1] == "connected"
            and s
        ),
        30,
        "broker 2 did not reconnect",
    )
    assert "lost" not in states  # same session: only suspended, then connected again
    registration = zk.get_broker(2)
    assert registration is not None
    assert registration.epoch == session.epoch
    first.kill()
    wait_until(
        lambda: zk.get_controller_id() == 2,
        SESSION_MS / 1000 + 5,
        lambda: "broker 2 did not take over:\n" + pinned.log_tail(),
    )


def test_controller_cut_off_from_zookeeper_stops_acting_until_its_session_is_back(
    brokers: Start, zk_client: KazooClient, zk_ensemble: ZkEnsemble, zk_chroot: str
) -> None:
    """DESIGN 4.5: a controller whose session is suspended stops acting.

    Setup: broker 1 is the controller, pinned to one ZooKeeper server with a long session;
    broker 2 uses the other two. Steps: kill broker 1's server; ask broker 1 for preferred
    elections (nothing needs electing, so an acting controller would answer from its
    context alone); restart the server; ask again.
    Validate: while suspended the request times out (the event thread holds it); once the
    same session is back, broker 1 is still the controller at the same epoch and answers."""
    zk = KafkaZkClient(zk_client)
    pinned_server = 0
    controller = brokers(1, 20_000, zk_ensemble.connect_string(zk_chroot, members=[0]))
    wait_until(lambda: zk.get_controller_id() == 1, 30, lambda: controller.log_tail())
    brokers(2, SESSION_MS, zk_ensemble.connect_string(zk_chroot, members=[1, 2]))
    wait_until(lambda: set(zk.get_all_brokers().brokers) == {1, 2}, 30, "broker 2 missing")
    epoch = zk.get_controller_epoch()
    address = f"127.0.0.1:{controller.port()}"
    request = m.ElectLeadersRequest(0, (), 1500)

    zk_ensemble.kill_server(pinned_server)
    try:
        wait_until(
            lambda: any(e.get("state") == "suspended" for e in controller.events()),
            15,
            "broker 1 did not notice its server going away",
        )
        with BrokerControlClient(address, timeout_s=10) as client:
            held = client.elect_leaders(request)
    finally:
        zk_ensemble.start_server(pinned_server)
    assert held.error is Errors.REQUEST_TIMED_OUT

    def answered() -> bool:
        with BrokerControlClient(address, timeout_s=10) as client:
            return client.elect_leaders(request).error is Errors.NONE

    wait_until(answered, 30, lambda: "broker 1 did not act again:\n" + controller.log_tail())
    states = [e["state"] for e in controller.events() if e["kind"] == "zk_session_state"]
    assert "lost" not in states
    assert zk.get_controller_id() == 1
    assert zk.get_controller_epoch() == epoch
