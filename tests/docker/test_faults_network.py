"""Network faults on the compose cluster: each kind takes effect (measured from inside the
containers' network namespaces) and its undo leaves no rule, qdisc or proxy behind.

Setup: the session's compose cluster (3 zk servers, 3 brokers, 3 s sessions), reached
through `chaos.cluster.handle.ClusterHandle`, the runner's own `FaultTarget`.
Validate after every test: no rule of any chaos fault is left on any service and the
three brokers are registered (the cluster is left whole).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chaos.cluster.handle import ClusterHandle
from chaos.errors import UnknownTarget
from chaos.faults import network as net
from chaos.faults import packets
from chaos.faults.base import Fault
from chaos.faults.latency import Latency, unproxied
from chaos.faults.links import ZK_PORT, running_netns
from chaos.faults.lost_reply import ZkLostReply
from chaos.faults.netns import Netns, leftovers_everywhere, netns_of
from chaos.faults.registry import fault_from_json
from chaos.faults.tcp_watch import parse_cons, parse_ss
from chaos.faults.zk_reset import ZkReset
from harness.compose import ComposeCluster
from harness.waiting import wait_until
from zkdata.client import KafkaZkClient
from zkdata.model import Broker

pytestmark = pytest.mark.docker

BROKERS = ("broker1", "broker2", "broker3")
PROJECT_LABEL = "com.docker.compose.project"
SERVICE_LABEL = "com.docker.compose.service"


@pytest.fixture(scope="module")
def target(compose_cluster: ComposeCluster) -> Iterator[ClusterHandle]:
    """The fault target over the session's cluster: the runner's own `ClusterHandle`."""
    with ClusterHandle.for_compose(compose_cluster) as cluster:
        yield cluster


@pytest.fixture(autouse=True)
def left_whole(target: ClusterHandle) -> Iterator[None]:
    """After each test: no chaos rule or qdisc anywhere, every broker registered."""
    yield
    for service in target.services():
        netns = netns_of(target, service)
        assert netns is not None, f"{service} is not running"
        assert netns.leftovers() == [], f"chaos rules left on {service}"
        assert netns.root_qdisc() is None, f"chaos qdisc left on {service}"
    wait_until(
        lambda: all(target.broker_registered(i) for i in (1, 2, 3)),
        60,
        "brokers did not all register again",
    )


def run_through(fault: Fault, target: ClusterHandle) -> None:
    """Start, prove it took effect (and is not undone), stop, prove the undo."""
    fault.start(target)
    try:
        effect = fault.took_effect(target)
        assert effect.ok, effect.detail
        still = fault.undone(target)
        assert not still.ok, f"undone while in effect: {still.detail}"
    finally:
        fault.stop(target)
    undone = fault.undone(target)
    assert undone.ok, undone.detail
    print(f"{fault.kind}: took effect: {effect.detail}; undone: {undone.detail}")


def test_target_refuses_unknown_service(target: ClusterHandle) -> None:
    """The test target refuses services the project does not have."""
    with pytest.raises(UnknownTarget):
        target.pid("kafka9")


@pytest.mark.parametrize("grudge", ["halves", "bridge", "isolate"])
def test_partition_of_the_brokers_cuts_exactly_the_grudge(
    target: ClusterHandle, grudge: str
) -> None:
    """A partition of the brokers cuts the links its grudge names and no other."""
    run_through(net.Partition(BROKERS, grudge), target)


def test_majorities_ring_over_the_whole_cluster(target: ClusterHandle) -> None:
    """A majorities ring over all six services: each still sees a majority."""
    run_through(net.Partition(target.services(), "majorities-ring"), target)


def test_zk_isolate_cuts_a_broker_from_zookeeper_only(target: ClusterHandle) -> None:
    """The broker loses every zk server; brokers and the ensemble stay connected."""
    run_through(net.ZkIsolate(("broker2",)), target)


def test_broker_isolate_cuts_a_broker_from_the_other_brokers(target: ClusterHandle) -> None:
    """The broker loses the other brokers; ZooKeeper stays reachable."""
    run_through(net.BrokerIsolate(("broker1",)), target)


def test_session_expire_unregisters_the_broker_until_healed(target: ClusterHandle) -> None:
    """Cut from ZooKeeper, the broker's registration disappears; after the heal it
    registers again."""
    fault = net.SessionExpire(("broker3",), expire_deadline_s=30, register_deadline_s=60)
    assert target.broker_registered(3)
    run_through(fault, target)
    assert target.broker_registered(3)


def test_packet_loss_drops_about_the_configured_fraction(target: ClusterHandle) -> None:
    """30 % loss: the counters of a UDP burst show about 30 % dropped."""
    run_through(packets.PacketLoss(("broker1",), 30), target)


def test_bandwidth_limits_what_the_broker_sends(target: ClusterHandle) -> None:
    """A 512 kbit token bucket: a flood leaves at about 512 kbit/s."""
    run_through(packets.Bandwidth(("broker2",), 512), target)


def test_latency_adds_the_delay_to_round_trips(target: ClusterHandle) -> None:
    """100 ms: round trips through the proxy are about 100 ms longer; no proxy after."""
    fault = Latency(("broker3",), 100)
    run_through(fault, target)
    assert fault.proxies() == {}


def straight_to_zookeeper(target: ClusterHandle, proxies: set[int]) -> list[str]:
    """broker1's established connections to a zk server that bypass the proxies."""
    shown = Netns(target.pid("broker1")).run(["ss", "-Htnp", "state", "established"]).stdout
    return unproxied(shown, {(target.ip(z), 2181) for z in ("zk1", "zk2", "zk3")}, proxies)


def test_latency_moves_the_brokers_zookeeper_session_onto_the_proxy(
    target: ClusterHandle,
) -> None:
    """The broker's existing ZooKeeper connection is closed at start and comes back
    through the proxy; after stop it goes straight to ZooKeeper again."""
    fault = Latency(("broker1",), 30)
    assert len(straight_to_zookeeper(target, set())) == 1
    fault.start(target)
    try:
        proxies = set(fault.proxies())
        wait_until(
            lambda: straight_to_zookeeper(target, proxies) == [],
            30,
            lambda: f"still straight: {straight_to_zookeeper(target, proxies)}",
        )
    finally:
        fault.stop(target)
    wait_until(
        lambda: len(straight_to_zookeeper(target, set())) == 1,
        30,
        "broker1 did not reconnect straight to ZooKeeper",
    )
    assert fault.undone(target).ok


def test_start_twice_adds_each_rule_once(target: ClusterHandle) -> None:
    """Starting a fault again adds nothing; stopping it twice is fine."""
    fault = net.ZkIsolate(("broker1",))
    fault.start(target)
    try:
        first = leftovers_everywhere(target, fault.fault_id)
        fault.start(target)
        assert leftovers_everywhere(target, fault.fault_id) == first
    finally:
        fault.stop(target)
        fault.stop(target)
    assert fault.undone(target).ok


def test_a_target_restarted_mid_fault_undoes_cleanly(target: ClusterHandle) -> None:
    """Loss, a bandwidth limit, latency and a cut from ZooKeeper on a broker that
    restarts meanwhile: its new namespace has none of it, the proxy left in the old one
    is found and ended, the zk servers' rules are deleted, undone holds for each."""
    faults: list[Fault] = [
        packets.PacketLoss(("broker2",), 10),
        packets.Bandwidth(("broker2",), 1024),
        Latency(("broker2",), 50),
        net.ZkIsolate(("broker2",)),
    ]
    old = Netns(target.pid("broker2"))
    for fault in faults:
        fault.start(target)
    assert old.leftovers() != []
    target.stop("broker2", timeout_s=10)
    target.start("broker2")
    wait_until(lambda: target.status("broker2") == "running", 30, "broker2 did not restart")
    for fault in faults:
        fault.stop(target)
        undone = fault.undone(target)
        assert undone.ok, undone.detail


def test_rebuilt_fault_heals_what_the_original_started(target: ClusterHandle) -> None:
    """A fault rebuilt from its description (as `heal` does) removes the original's
    rules and proxy."""
    original = Latency(("broker1",), 80)
    original.start(target)
    rebuilt = fault_from_json(original.kind, original.describe())
    rebuilt.stop(target)
    assert original.undone(target).ok


def _registration(target: ClusterHandle, broker: int) -> Broker | None:
    def read(zk: KafkaZkClient) -> Broker | None:
        return zk.get_broker(broker)

    return target.read_zk(read)


def test_zk_lost_reply_freezes_the_leader_and_every_broker_keeps_its_session(
    target: ClusterHandle,
) -> None:
    """A lost-reply spell on a broker: the ensemble's leader is frozen during the hold and
    thawed after it, no rule is left, and no broker loses its session over it (each keeps
    the registration, and so the broker epoch, it had). The hold stays well under this
    tier's 3 s sessions."""
    epochs = {i: _registration(target, i) for i in (1, 2, 3)}
    assert all(epochs.values()), f"brokers not all registered: {epochs}"
    fault = ZkLostReply(("broker2",), hold_s=1.0)
    fault.start(target)
    try:
        effect = fault.took_effect(target)
        assert effect.ok, effect.detail
        assert "froze zk" in effect.detail
        assert "FROZEN" in effect.detail
    finally:
        fault.stop(target)
    undone = fault.undone(target)
    assert undone.ok, undone.detail
    after = {i: _registration(target, i) for i in (1, 2, 3)}
    assert {i: b.epoch for i, b in after.items() if b} == {
        i: b.epoch for i, b in epochs.items() if b
    }


def test_the_servers_list_the_brokers_connections_with_what_they_hold(
    target: ClusterHandle,
) -> None:
    """`cons` on every server, as a spell reads it: together they list a connection of
    each broker, each holding a count of requests."""
    held: dict[tuple[str, int], int] = {}
    for server in ("zk1", "zk2", "zk3"):
        listing = target.zk_connections(server)
        assert listing is not None, f"{server} did not answer cons"
        held.update(parse_cons(listing))
    ips = {target.ip(b) for b in BROKERS}
    assert ips <= {ip for ip, _ in held}
    assert all(count >= 0 for count in held.values())


def test_zk_reset_closes_the_connection_and_the_broker_keeps_its_session(
    target: ClusterHandle,
) -> None:
    """A reset of broker2's ZooKeeper connection: the connection it had is gone, a new one
    opens (the client reconnects), and the broker keeps its session, so its registration
    and broker epoch stay as they were."""
    before = _registration(target, 2)
    assert before is not None, "broker2 is not registered"
    fault = ZkReset(("broker2",))
    fault.start(target)
    effect = fault.took_effect(target)
    assert effect.ok, effect.detail
    assert "reset" in effect.detail

    def reconnected() -> bool:
        listing = running_netns(target, "broker2").established(ZK_PORT)
        return bool(parse_ss(listing))

    wait_until(reconnected, 20, "broker2 did not reconnect to ZooKeeper", interval=0.2)
    assert fault.undone(target).ok
    after = _registration(target, 2)
    assert after is not None
    assert after.epoch == before.epoch
