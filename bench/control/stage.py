"""`Stage`: one chroot of the run's ZooKeeper ensemble with its own broker fleet.

The suite (`bench.control.suite`) measures each cluster size, topic creation and produce on a
stage of their own, so that one measure's leftovers (topics, sessions, logs) never meet
another's. A stage knows its brokers' event logs and pids, waits for the cluster to
settle, asks for a preferred election of every partition (to spread leaderships again
after brokers were killed and restarted), and profiles brokers while a measure runs.
Main thread.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from bench.shared import console
from bench.shared.fleet import POLL_INTERVAL_S, BrokerFleet, EventTail
from bench.shared.profiling import RATE_HZ, Profiles, profiled
from domain import TopicPartition
from eventlog import EventKind
from harness.waiting import wait_until
from harness.zk_endpoint import ZkEndpoint
from harness.zk_ensemble import new_chroot
from zkdata import paths
from zkdata.admin_znodes import PreferredReplicaElectionZNode
from zkdata.client import KafkaZkClient

#: How long the event logs must stay unchanged before a stage counts as settled.
QUIET_S = 1.5


@dataclass(frozen=True, slots=True)
class Stage:
    """A chroot (`endpoint` includes it), its broker fleet and its run directory."""

    name: str
    endpoint: ZkEndpoint
    fleet: BrokerFleet
    out: Path
    session_timeout_ms: int
    timeout_s: float
    profile_dir: Path | None
    tls_dir: Path | None = None

    @property
    def after_session_s(self) -> float:
        """A deadline that also covers a dead broker's session expiring."""
        return self.timeout_s + self.session_timeout_ms / 1000

    def logs(self) -> dict[int, Path]:
        """Every broker's event log."""
        return {b: self.fleet.event_log(b) for b in self.fleet.broker_ids}

    def start(self) -> None:
        """Start every broker and wait until they are registered and quiet."""
        self.fleet.start_all()
        self.settle(self.fleet.broker_ids)

    def settle(self, broker_ids: Sequence[int]) -> float:
        """Wait for `broker_ids` to register and every event log to go quiet; how long."""
        self.fleet.wait_registered(list(broker_ids), timeout=self.after_session_s)
        return self.fleet.wait_quiet(QUIET_S, timeout=self.timeout_s)

    def restart(self, broker_id: int) -> None:
        """Start a broker that was killed or stopped again and wait until it is back in
        every ISR and the cluster is quiet."""
        console.phase(f"{self.name}: restarting broker {broker_id}")
        self.fleet.start(broker_id)
        self.fleet.wait_registered([broker_id], timeout=self.after_session_s)
        self.wait_full_isr()
        self.wait_quiet()

    def wait_quiet(self) -> int:
        """Wait until the event logs are quiet; returns that moment (ms since the epoch)."""
        self.fleet.wait_quiet(QUIET_S, timeout=self.after_session_s)
        return int(time.time() * 1000)

    def watch_requests(self, controller_id: int, live: Collection[int]) -> RequestTally:
        """Start counting the control requests `controller_id` sends to `live` brokers."""
        return RequestTally(EventTail(self.fleet.event_log(controller_id)), live)

    def wait_answered(self, tally: RequestTally) -> int:
        """Wait until every request counted by `tally` was answered and the event logs are
        quiet; returns that moment (ms since the epoch). A broker busy applying a large
        request writes nothing meanwhile, so quiet logs alone would end the wait early."""
        try:
            wait_until(
                lambda: self.fleet.check_alive() and tally.answered(),
                timeout=self.after_session_s,
                message="",
                interval=POLL_INTERVAL_S,
            )
        except TimeoutError:
            console.warn(f"{self.name}: {tally.unanswered()} control requests still unanswered")
        return self.wait_quiet()

    def controller_id(self) -> int:
        """The broker holding `/controller` now."""
        with self.endpoint.open() as zk:
            controller = KafkaZkClient(zk).get_controller_id()
        if controller is None:
            raise RuntimeError(f"{self.name}: no broker holds /controller")
        return controller

    def states(self) -> dict[TopicPartition, tuple[int, tuple[int, ...], tuple[int, ...]]]:
        """Every partition's (leader, ISR, replicas) as ZooKeeper has it (pipelined)."""
        with self.endpoint.open() as zk:
            client = KafkaZkClient(zk)
            assignments = client.get_topic_assignments(sorted(client.get_all_topics())).found
            replicas = {
                TopicPartition(topic, p): a.replicas
                for topic, assignment in assignments.items()
                for p, a in assignment.partitions.items()
            }
            states = client.get_partition_states(list(replicas)).found
        return {
            tp: (s.leader_and_isr.leader, s.leader_and_isr.isr, replicas[tp])
            for tp, s in states.items()
        }

    def leaders(self) -> dict[TopicPartition, int]:
        """Every partition's leader as ZooKeeper has it."""
        return {tp: leader for tp, (leader, _, _) in self.states().items()}

    def wait_full_isr(self) -> None:
        """Until every partition has all its replicas in the ISR (followers caught up)."""
        wait_until(
            lambda: all(set(isr) == set(r) for _, isr, r in self.states().values()),
            timeout=self.timeout_s,
            message=f"{self.name}: some ISR stayed incomplete",
            interval=1.0,
        )

    def preferred_election(self) -> None:
        """With every ISR complete, ask for a preferred election of every partition and
        wait until each is led by its first replica and the cluster is quiet."""
        self.wait_full_isr()
        partitions = tuple(sorted(self.leaders()))
        with self.endpoint.open() as zk:
            zk.create(
                paths.PREFERRED_REPLICA_ELECTION,
                PreferredReplicaElectionZNode.encode(partitions),
            )
        console.detail(f"preferred election of {len(partitions):,} partitions requested")
        wait_until(
            lambda: all(leader == r[0] for leader, _, r in self.states().values()),
            timeout=self.timeout_s,
            message=f"{self.name}: the preferred election left some leaders elsewhere",
            interval=1.0,
        )
        self.wait_quiet()

    def profiled(
        self, name: str, broker_ids: Sequence[int], rate_hz: int = RATE_HZ
    ) -> AbstractContextManager[Profiles | None]:
        """Flame graphs of `broker_ids`, sampled `rate_hz` times a second, while the block
        runs (nothing if profiling is off)."""
        if self.profile_dir is None:
            return nullcontext()
        pids = {f"broker{b}": self.fleet.process(b).pid for b in broker_ids}
        return profiled(pids, self.profile_dir, f"{self.name}-{name}", rate_hz)


class RequestTally:
    """Counts a controller's `control_request_sent` and `control_response_received`
    events to the brokers in `live`, from an `EventTail` positioned where counting
    starts (requests to a broker that died are never answered)."""

    def __init__(self, tail: EventTail, live: Collection[int]) -> None:
        self._tail = tail
        self._live = set(live)
        tail.new_lines()  # what was written before does not count
        self._sent = 0
        self._answered = 0

    def answered(self) -> bool:
        """Whether every request sent so far was answered (at least one was sent)."""
        for line in self._tail.new_lines():
            sent = _SENT in line
            if sent or _ANSWERED in line:
                if int(json.loads(line).get("broker_id", -1)) not in self._live:
                    continue
                if sent:
                    self._sent += 1
                else:
                    self._answered += 1
        return self._sent > 0 and self._answered >= self._sent

    def unanswered(self) -> int:
        """Requests sent and not answered yet."""
        return self._sent - self._answered


_SENT = f'"kind":"{EventKind.CONTROL_REQUEST_SENT}"'
_ANSWERED = f'"kind":"{EventKind.CONTROL_RESPONSE_RECEIVED}"'


def open_stage(
    name: str,
    root: ZkEndpoint,
    run_dir: Path,
    broker_ids: list[int],
    session_timeout_ms: int,
    timeout_s: float,
    profile_dir: Path | None,
    tls_dir: Path | None = None,
) -> Stage:
    """A fresh chroot on the ensemble at `root` and a fleet (not started) on it, speaking
    mutual TLS with the certificates of `tls_dir` when given."""
    chroot = new_chroot()
    with root.open() as zk:
        zk.ensure_path(chroot)
    endpoint = root.within(chroot)
    out = run_dir / name
    fleet = BrokerFleet(broker_ids, endpoint, out, session_timeout_ms, tls_dir)
    return Stage(name, endpoint, fleet, out, session_timeout_ms, timeout_s, profile_dir, tls_dir)
