"""Disk faults on a compose project of its own whose brokers' log directories are behind
disk layers on the host (`harness.disk_layers`), through `ClusterHandle` and `Injector`.

Setup: the project comes up with `docker-compose.disk.yml` and brokers run with
`--on-log-dir-failure notify` (they keep running with the directory offline); a topic
of one partition replicated on every broker; a producer thread appends to it all along.

Steps and checks:
- every broker's own mount table shows its project's layer at its log directory, and the
  files the broker wrote are owned by its user (10001) on the host;
- `disk-eio` on writes of the partition's leader: the layer counts failed writes, the
  broker emits `log_dir_failed` naming EIO; the undo makes the layer transparent and
  restarts the broker, which registers again with its log directory online;
- `disk-full` with no bytes left on the leader: its writes fail with ENOSPC, the broker
  emits `log_dir_failed` naming it, and the undo restarts it as for `disk-eio`;
- `disk-slow` on every operation: the layer counts held operations; the undo leaves the broker
  running, not restarted;
- a runner SIGKILLed while `disk-slow`, `disk-eio` (the leader) and `disk-full` are in
  effect on the three brokers leaves the rules in the layers and two log directories
  offline; `python -m chaos heal` clears every rule, restarts the two brokers whose
  directories failed (not the slow one), which register again, and empties the heal
  state;
- a runner SIGKILLed in the middle of a `power-loss` of two brokers (after it killed them
  and their layers took back their unsynced writes, before it started them again) leaves
  both stopped and their layers journaling; `python -m chaos heal` starts both, which
  register again, clears every rule and empties the heal state;
- taking the project down unmounts its layers and ends their daemons (checked once the
  project is gone, in the fixture).
"""

from __future__ import annotations

import os
import random
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from admin.topics import create_topic
from chaos.cluster.handle import ClusterHandle
from chaos.faults.disk import DiskEio, DiskFault, DiskFull, DiskSlow, mount_table
from chaos.faults.process import NOT_RUNNING
from chaos.run.heal_state import HealState
from chaos.run.injector import Deadlines
from chaos.run.testing import heal, in_effect, killed_mid_fault
from client import Client
from client.errors import ClientError
from domain import TopicPartition
from eventlog import event_log_path, read_events
from harness.compose import ComposeCluster, missing_images, new_run_id, started_project
from harness.disk_layers import (
    LayerControl,
    LayerPaths,
    daemons,
    fuse_unavailable,
    host_layers,
    layer_root,
    mounted,
)
from harness.waiting import wait_until
from rpc import messages as m
from zkdata.client import KafkaZkClient

pytestmark = pytest.mark.docker

REPO_ROOT = Path(__file__).resolve().parents[2]
DEADLINES = Deadlines(took_effect_s=45.0, undone_s=120.0, poll_s=0.2)
TOPIC = "disk-faults"
TP = TopicPartition(TOPIC, 0)
CONTAINER_UID = 10001


@pytest.fixture(scope="module")
def disk_cluster() -> Iterator[ComposeCluster]:
    """A project of its own with disk layers under its brokers, in notify mode; once it
    is down, nothing of its layers is left mounted or running."""
    missing = fuse_unavailable()
    if missing:
        pytest.fail(f"the disk layers need FUSE here: {missing}", pytrace=False)
    if missing_images():
        pytest.fail(f"images missing: {missing_images()}; run `make images`", pytrace=False)
    project = f"testbed-disk-{os.getpid()}"
    with started_project(
        REPO_ROOT,
        project,
        new_run_id("docker-disk"),
        3000,
        env={"ON_LOG_DIR_FAILURE": "notify"},
        disk_layers=True,
    ) as cluster:
        yield cluster
    assert host_layers(project) == {}, "the project's layers are still mounted"
    assert daemons(f"{project}/") == {}, "the project's layer daemons still run"
    assert not (layer_root() / project).exists()


@pytest.fixture(scope="module")
def handle(disk_cluster: ComposeCluster) -> Iterator[ClusterHandle]:
    """A handle on the project, with the topic created."""
    with ClusterHandle.for_compose(disk_cluster) as cluster:
        zk = disk_cluster.zk()
        try:
            kzk = KafkaZkClient(zk)
            create_topic(kzk, TOPIC, 1, 3, rng=random.Random(4))
            wait_until(lambda: kzk.get_partition_states([TP]).found.get(TP), 30, "no topic")
        finally:
            zk.stop()
            zk.close()
        yield cluster


@pytest.fixture
def producing(disk_cluster: ComposeCluster) -> Iterator[list[int]]:
    """A thread producing to the topic every 50 ms (acks=1) until the test ends; the
    list counts the acknowledged sends."""
    addresses = disk_cluster.broker_addresses()
    client = Client(
        list(addresses.values()), topics=(TOPIC,), address_map=addresses, tls=disk_cluster.tls
    )
    acknowledged: list[int] = []
    done = threading.Event()

    def produce() -> None:
        while not done.wait(0.05):
            try:
                client.produce(TOPIC, 0, [m.ProducedRecord(None, b"x" * 100)], acks=1)
                acknowledged.append(1)
            except ClientError:  # the leader is failing or moving: try again
                continue

    thread = threading.Thread(target=produce, name="test-producer")
    thread.start()
    try:
        wait_until(lambda: len(acknowledged) >= 5, 60, "nothing was acknowledged")
        yield acknowledged
    finally:
        done.set()
        thread.join(30)
        client.close()


def _leader(disk_cluster: ComposeCluster) -> int:
    zk = disk_cluster.zk()
    try:
        return KafkaZkClient(zk).get_partition_states([TP]).found[TP].leader_and_isr.leader
    finally:
        zk.stop()
        zk.close()


def _registered(handle: ClusterHandle) -> bool:
    return all(handle.broker_registered(i) for i in (1, 2, 3))


def test_every_broker_log_dir_is_its_layer_and_stays_the_brokers(
    disk_cluster: ComposeCluster, handle: ClusterHandle, producing: list[int]
) -> None:
    for service in ("broker1", "broker2", "broker3"):
        paths = LayerPaths(layer_root(), handle.project, service)
        table = mounted(mount_table(handle.pid(service)))
        assert table.get(paths.tag) == Path("/var/lib/testbed/data"), table
        stats = LayerControl(paths.socket).stats()
        assert stats.rules.transparent
    leader = f"broker{_leader(disk_cluster)}"
    data = LayerPaths(layer_root(), handle.project, leader).data
    wait_until(lambda: list(data.glob(f"{TOPIC}-0/*.log")), 30, "no segment on the host")
    owners = {p.stat().st_uid for p in data.rglob("*")}
    assert owners == {CONTAINER_UID}


@pytest.mark.parametrize(
    ("fault_of", "error"),
    [
        (lambda victim: DiskEio((victim,), "write", "*", 1.0), "Input/output error"),
        (lambda victim: DiskFull((victim,), 0), "No space left on device"),
    ],
    ids=["disk-eio", "disk-full"],
)
def test_a_failing_disk_fails_the_log_dir_and_the_undo_restarts_the_broker(
    disk_cluster: ComposeCluster,
    handle: ClusterHandle,
    producing: list[int],
    tmp_path: Path,
    fault_of: Callable[[str], DiskFault],
    error: str,
) -> None:
    wait_until(lambda: _registered(handle), 90, "the cluster is not whole")
    victim = f"broker{_leader(disk_cluster)}"
    before = handle.started_at(victim)
    fault = fault_of(victim)
    events = event_log_path(disk_cluster.run_dir, victim)
    seen = len(read_events(events))
    with in_effect(handle, tmp_path / "run", fault, DEADLINES) as started:
        assert "layer failed" in started.check.detail
        failed = wait_until(
            lambda: [e for e in read_events(events)[seen:] if e.get("kind") == "log_dir_failed"],
            30,
            f"{victim} emitted no log_dir_failed",
        )
        assert error in failed[-1]["reason"]
    assert handle.started_at(victim) != before, "the undo did not restart the broker"
    stats = LayerControl(LayerPaths(layer_root(), handle.project, victim).socket).stats()
    assert stats.rules.transparent
    wait_until(lambda: _registered(handle), 90, f"{victim} did not register again")
    sent = len(producing)
    wait_until(lambda: len(producing) > sent + 5, 60, "no produce acknowledged after the undo")


def test_a_slow_disk_holds_operations_and_the_undo_leaves_the_broker_running(
    disk_cluster: ComposeCluster, handle: ClusterHandle, producing: list[int], tmp_path: Path
) -> None:
    wait_until(lambda: _registered(handle), 90, "the cluster is not whole")
    victim = f"broker{_leader(disk_cluster)}"
    before = handle.started_at(victim)
    fault = DiskSlow((victim,), "any", 20)
    with in_effect(handle, tmp_path / "run", fault, DEADLINES) as started:
        assert "layer delayed" in started.check.detail
    assert handle.started_at(victim) == before
    assert handle.status(victim) == "running"


RUNNER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from chaos.cluster.handle import ClusterHandle
    from chaos.faults.disk import DiskEio, DiskFull, DiskSlow
    from chaos.run.injector import Injector
    from chaos.run.testing import IN_EFFECT

    project, run_dir, failing, full, slow = sys.argv[1:]
    injector = Injector(ClusterHandle.for_project(project), Path(run_dir))
    results = [
        injector.start(DiskSlow((slow,), "write", 30)),
        injector.start(DiskEio((failing,), "write", "*", 1.0)),
        injector.start(DiskFull((full,), 0)),
    ]
    failed = [r.check.detail for r in results if not r.ok]
    print("failed: " + "; ".join(failed) if failed else IN_EFFECT, flush=True)
    time.sleep(600)
    """
)


def test_heal_clears_the_rules_a_runner_killed_mid_fault_left(
    disk_cluster: ComposeCluster, handle: ClusterHandle, producing: list[int], tmp_path: Path
) -> None:
    """The runner holds a slow disk, a failing one (the leader's) and a full one; once it
    is killed the rules stay and two log directories are offline. Heal clears every rule
    and restarts the two brokers whose directories failed, which register again."""
    wait_until(lambda: _registered(handle), 90, "the cluster is not whole")
    failing = f"broker{_leader(disk_cluster)}"
    full, slow = sorted({"broker1", "broker2", "broker3"} - {failing})
    before = {broker: handle.started_at(broker) for broker in (failing, full, slow)}
    run_dir = tmp_path / "run"
    killed_mid_fault(RUNNER, [handle.project, str(run_dir), failing, full, slow], REPO_ROOT)
    controls = _controls(handle, (failing, full, slow))
    assert not any(c.stats().rules.transparent for c in controls.values())
    assert len(HealState(run_dir, handle.project).load()) == 3

    _heal_everything(handle, run_dir, tmp_path / ".chaos-state", controls)
    restarted = {b for b in before if handle.started_at(b) != before[b]}
    assert restarted == {failing, full}, "heal restarts exactly the failed directories"


POWER_RUNNER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from chaos.cluster.handle import ClusterHandle
    from chaos.faults import power
    from chaos.faults.power import DiskVolatile, PowerLoss
    from chaos.run.injector import Injector
    from chaos.run.testing import IN_EFFECT

    def cut_off(cluster, targets):  # the runner dies before it starts the targets again
        print(IN_EFFECT, flush=True)
        time.sleep(600)

    project, run_dir, *cut = sys.argv[1:]
    injector = Injector(ClusterHandle.for_project(project), Path(run_dir))
    armed = injector.start(DiskVolatile(tuple(cut)))
    if not armed.ok:
        print("failed: " + armed.check.detail, flush=True)
        sys.exit(1)
    power.start_stopped = cut_off
    injector.start(PowerLoss(tuple(cut)))
    print("failed: the power loss ended", flush=True)
    """
)


def test_heal_starts_the_brokers_a_runner_killed_mid_power_loss_left_stopped(
    disk_cluster: ComposeCluster, handle: ClusterHandle, tmp_path: Path
) -> None:
    """The runner arms two brokers' layers, cuts their power and dies before starting
    them again: both stay stopped, their layers journaling. Heal starts them, and they
    register again, with no rule left in any layer."""
    wait_until(lambda: _registered(handle), 90, "the cluster is not whole")
    cut = ("broker1", "broker2")
    run_dir = tmp_path / "run"
    killed_mid_fault(POWER_RUNNER, [handle.project, str(run_dir), *cut], REPO_ROOT)
    controls = _controls(handle, cut)
    assert all(handle.status(b) in NOT_RUNNING for b in cut), [handle.status(b) for b in cut]
    assert all(c.stats().rules.lose_unsynced for c in controls.values())
    kinds = [f.kind for f in HealState(run_dir, handle.project).load()]
    assert sorted(kinds) == ["disk-volatile", "power-loss"], kinds

    _heal_everything(handle, run_dir, tmp_path / ".chaos-state", controls)
    assert all(handle.status(b) == "running" for b in cut)


def _controls(handle: ClusterHandle, brokers: tuple[str, ...]) -> dict[str, LayerControl]:
    return {
        broker: LayerControl(LayerPaths(layer_root(), handle.project, broker).socket)
        for broker in brokers
    }


def _heal_everything(
    handle: ClusterHandle, run_dir: Path, state_dir: Path, controls: dict[str, LayerControl]
) -> None:
    """`python -m chaos heal` leaves nothing: it says so, every layer is without rules,
    the heal state is empty and every broker registers again."""
    healed = heal(handle.project, state_dir, REPO_ROOT)
    assert healed.returncode == 0, healed.stdout + healed.stderr
    assert "nothing left" in healed.stdout
    assert all(c.stats().rules.transparent for c in controls.values())
    assert HealState(run_dir, handle.project).load() == []
    wait_until(lambda: _registered(handle), 90, "a healed broker did not register again")
