"""The `request` fault on the compose cluster: a proxy in the controller's network namespace
acts on the controller's requests to one broker, its record names what it did, the broker
fences the stale copies it delivers, and its undo leaves no proxy and no rule, also when
the runner that started it was killed (`python -m chaos heal`).

Setup: the session's compose cluster (3 zk servers, 3 brokers with mutual TLS, 3 s
sessions), reached through `chaos.cluster.handle.ClusterHandle`; control requests are
provoked by creating topics with an explicit assignment and by killing a broker.
Validate after every test: no chaos rule and no request proxy left, every broker
registered.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from admin.topics import create_topic
from chaos.cluster.handle import ClusterHandle
from chaos.faults.netns import leftovers_everywhere, netns_of
from chaos.faults.proxy_process import tagged
from chaos.faults.request import PROXY_MODULE, RequestFault
from chaos.run.heal_state import HealState
from eventlog import event_log_path, read_events
from harness.compose import ComposeCluster
from harness.waiting import wait_until
from zkdata.client import KafkaZkClient

pytestmark = pytest.mark.docker

REPO_ROOT = Path(__file__).resolve().parents[2]
_TOPICS = itertools.count(1)


@pytest.fixture(scope="module")
def target(compose_cluster: ComposeCluster) -> Iterator[ClusterHandle]:
    """The fault target over the session's cluster: the runner's own `ClusterHandle`."""
    with ClusterHandle.for_compose(compose_cluster) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def zk(compose_cluster: ComposeCluster) -> Iterator[KafkaZkClient]:
    """A secured ZooKeeper client to create topics with."""
    client = compose_cluster.zk()
    try:
        yield KafkaZkClient(client)
    finally:
        client.stop()
        client.close()


@pytest.fixture(autouse=True)
def left_whole(target: ClusterHandle) -> Iterator[None]:
    """After each test: no chaos rule and no request proxy anywhere, every broker back."""
    yield
    for service in target.services():
        if target.status(service) != "running":
            target.start(service)
    wait_until(
        lambda: all(target.broker_registered(i) for i in (1, 2, 3)),
        60,
        "brokers did not all register again",
    )
    for service in target.services():
        netns = netns_of(target, service)
        assert netns is not None, f"{service} is not running"
        assert netns.leftovers() == [], f"chaos rules left on {service}"
    assert tagged(PROXY_MODULE, f"{target.project}.") == {}, "a request proxy is left"


def roles(target: ClusterHandle) -> tuple[str, str, str]:
    """(controller, the broker the fault targets, the third broker)."""
    wait_until(lambda: target.controller_id() is not None, 30, "no controller")
    controller = f"broker{target.controller_id()}"
    others = [s for s in ("broker1", "broker2", "broker3") if s != controller]
    return controller, others[0], others[1]


def new_topic(zk: KafkaZkClient, replicas: list[str]) -> str:
    """Create a one-partition topic on `replicas` (the first is its leader)."""
    name = f"request-fault-{next(_TOPICS)}"
    create_topic(zk, name, assignment={0: [int(s.removeprefix("broker")) for s in replicas]})
    return name


def record_of(
    fault: RequestFault, target: ClusterHandle, step: str, topic: str, timeout_s: float = 30
) -> dict[str, Any]:
    """The proxy's first record of `step` on a request naming `topic`."""

    def found() -> dict[str, Any] | None:
        for record in fault.records(target):
            if record["step"] == step and any(p[0] == topic for p in record["leader_epochs"]):
                return record
        return None

    return wait_until(found, timeout_s, f"no {step} record for {topic}: {fault.records(target)}")


def fenced_by_broker(
    compose_cluster: ComposeCluster, broker: str, topic: str
) -> list[dict[str, Any]]:
    """The broker's `partition_fenced` events of LeaderAndIsr about `topic`, as it logged
    them (its own record of the fencing, beside the proxy's)."""
    return [
        e
        for e in read_events(event_log_path(compose_cluster.run_dir, broker))
        if e.get("kind") == "partition_fenced"
        and e.get("api") == "LeaderAndIsr"
        and any(s.get("topic") == topic for s in e.get("sample", ()))
    ]


def in_effect(fault: RequestFault, target: ClusterHandle, provoke: Callable[[], str]) -> str:
    """Start the fault, provoke a request; it took effect and is not undone. The topic."""
    fault.start(target)
    topic = provoke()
    wait_until(lambda: fault.took_effect(target).ok, 30, "the proxy acted on no request")
    assert not fault.undone(target).ok
    return topic


def stop_and_prove_undone(fault: RequestFault, target: ClusterHandle) -> None:
    fault.stop(target)
    undone = fault.undone(target)
    assert undone.ok, undone.detail


def test_a_duplicated_leader_and_isr_is_fenced_by_the_broker(
    target: ClusterHandle, zk: KafkaZkClient, compose_cluster: ComposeCluster
) -> None:
    """The LeaderAndIsr of a new topic reaches the broker twice; the broker applies the
    first and fences the second (same leader epoch): the proxy's record of the second
    delivery names the stale partition, fenced, none obeyed."""
    _, broker, third = roles(target)
    fault = RequestFault((broker,), "duplicate", "LeaderAndIsr", count=1, delay_ms=500)
    try:
        topic = in_effect(fault, target, lambda: new_topic(zk, [broker, third]))
        first = record_of(fault, target, "delivered", topic)
        again = record_of(fault, target, "delivered-again", topic)
    finally:
        stop_and_prove_undone(fault, target)
    assert first["answer"] == "NONE"
    assert again["stale"] == [[topic, 0, 0]]
    assert again["fenced"] == [[topic, 0, "STALE_CONTROLLER_EPOCH"]]
    assert again["unfenced"] == []
    assert [r["step"] for r in fault.trace()][:2] == ["delivered", "delivered-again"]
    wait_until(
        lambda: fenced_by_broker(compose_cluster, broker, topic), 10, "no partition_fenced logged"
    )


def test_a_reordered_leader_and_isr_arrives_after_a_newer_one_and_is_fenced(
    target: ClusterHandle, zk: KafkaZkClient, compose_cluster: ComposeCluster
) -> None:
    """The new topic's LeaderAndIsr (leader epoch 0) is held and answered; the third broker,
    its leader, is killed, and the election's LeaderAndIsr (epoch 1) overtakes it. The
    held one, delivered after it, is fenced."""
    _, broker, third = roles(target)
    fault = RequestFault((broker,), "reorder", "LeaderAndIsr", count=1, hold_s=60)
    try:
        topic = in_effect(fault, target, lambda: new_topic(zk, [third, broker]))
        held = record_of(fault, target, "held", topic)
        target.kill(third)
        late = record_of(fault, target, "delivered-late", topic, timeout_s=45)
    finally:
        stop_and_prove_undone(fault, target)
    assert held["leader_epochs"] == [[topic, 0, 0]]
    assert late["overtaken"] is True
    assert late["stale"] == [[topic, 0, 0]]
    assert late["fenced"] == [[topic, 0, "STALE_CONTROLLER_EPOCH"]]
    assert late["unfenced"] == []

    def old_epoch_fenced() -> bool:
        samples = [
            s
            for e in fenced_by_broker(compose_cluster, broker, topic)
            for s in e["sample"]
            if s["topic"] == topic
        ]
        return any(s["leader_epoch"] == 0 and s["current_leader_epoch"] >= 1 for s in samples)

    wait_until(old_epoch_fenced, 10, "the broker logged no fencing of leader epoch 0")


def test_a_dropped_request_is_sent_again_by_the_controller(
    target: ClusterHandle, zk: KafkaZkClient
) -> None:
    """A dropped LeaderAndIsr looks like a lost connection to the controller, which sends
    it again: the broker ends up leading the new topic's partition."""
    _, broker, third = roles(target)
    fault = RequestFault((broker,), "drop", "LeaderAndIsr", count=1)
    try:
        topic = in_effect(fault, target, lambda: new_topic(zk, [broker, third]))
        dropped = record_of(fault, target, "dropped", topic)
    finally:
        stop_and_prove_undone(fault, target)
    assert dropped["leader_epochs"] == [[topic, 0, 0]]
    assert dropped["controller_epoch"] >= 1


RUNNER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from chaos.cluster.handle import ClusterHandle
    from chaos.faults.request import RequestFault
    from chaos.run.injector import Injector

    project, run_dir, broker = sys.argv[1:]
    injector = Injector(ClusterHandle.for_project(project), Path(run_dir))
    fault = RequestFault((broker,), "delay", "all", count=0, delay_ms=100)
    result = injector.start(fault)
    print("in effect" if result.ok else f"failed: {result.check.detail}", flush=True)
    time.sleep(600)
    """
)


def test_heal_removes_the_proxy_and_the_redirect_a_killed_runner_left(
    target: ClusterHandle, zk: KafkaZkClient, tmp_path: Path
) -> None:
    """A runner starts the fault through the injector and is killed while it lasts; the
    proxy and its rule stay; `python -m chaos heal` rebuilds the fault from the heal state
    and leaves neither."""
    _, broker, third = roles(target)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    runner = subprocess.Popen(
        [sys.executable, "-c", RUNNER, target.project, str(run_dir), broker],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    fault = RequestFault((broker,), "delay", "all", count=0, delay_ms=100)
    try:
        wait_until(lambda: fault.proxies(target), 30, "the runner started no proxy")
        new_topic(zk, [broker, third])
        assert runner.stdout is not None
        assert runner.stdout.readline().strip() == "in effect"
    finally:
        runner.kill()
        runner.wait(timeout=30)
    assert fault.proxies(target)
    assert leftovers_everywhere(target, fault.fault_id)
    healed = subprocess.run(
        [sys.executable, "-m", "chaos", "heal", "--project", target.project,
         "--state-dir", str(tmp_path / ".chaos-state")],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert healed.returncode == 0, healed.stdout + healed.stderr
    assert fault.proxies(target) == {}
    assert leftovers_everywhere(target, fault.fault_id) == {}
    assert HealState(run_dir, target.project).load() == []
