"""The benchmark's broker processes and what their event logs say about failovers.

`BrokerFleet` starts, kills and restarts `BrokerProcess`es and waits, with deadlines
(`harness.wait_until`), for registrations, for `controller_failover_done` events
and for the cluster to go quiet. Event logs are followed incrementally by `EventTail`:
while a failover runs, the benchmark only scans newly appended bytes for one event kind,
so that its polling takes as little CPU as possible from the brokers on this 2-core
machine (`timeline` parses whole logs afterwards). Main thread.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eventlog import EventKind, event_log_path
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from harness.zk_endpoint import ZkEndpoint

#: How often the event logs are polled while waiting.
POLL_INTERVAL_S = 0.1


def _kind_marker(kind: EventKind) -> str:
    """The exact text `EventLog` writes for a kind (compact JSON separators)."""
    return f'"kind":"{kind}"'


_FAILOVER_DONE = _kind_marker(EventKind.CONTROLLER_FAILOVER_DONE)


def _holds(found: object, wanted: object) -> bool:
    return wanted in found if isinstance(found, list) else found == wanted


class BrokerDiedError(RuntimeError):
    """A broker process the benchmark expects to be running has exited."""


class EventTail:
    """Follows one append-only JSON-lines file, returning only complete new lines."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._partial = b""
        self._unread: list[str] = []

    def new_lines(self) -> list[str]:
        """The lines completed since the last call, after any given back with `unread`
        (none if the file does not exist)."""
        held, self._unread = self._unread, []
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                chunk = f.read()
        except FileNotFoundError:
            return held
        self._offset += len(chunk)
        data = self._partial + chunk
        lines = data.split(b"\n")
        self._partial = lines.pop()
        return held + [line.decode("utf-8", errors="replace") for line in lines if line]

    def unread(self, lines: list[str]) -> None:
        """Give back lines a reader did not look at: the next `new_lines` returns them first."""
        self._unread = lines + self._unread

    def size(self) -> int:
        """The file's current size in bytes (0 if absent)."""
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0


@dataclass(frozen=True, slots=True)
class FailoverDone:
    """A `controller_failover_done` event and the broker that wrote it."""

    broker_id: int
    event: dict[str, Any]

    @property
    def controller_epoch(self) -> int:
        """The epoch the controller was elected with."""
        return int(self.event["controller_epoch"])

    @property
    def duration_ms(self) -> float:
        """How long `on_failover` took, as measured by the controller."""
        return float(self.event["duration_ms"])

    @property
    def ts_ms(self) -> int:
        """Wall-clock time the event was written (ms since the epoch)."""
        return int(self.event["ts"])


@dataclass(slots=True)
class _Member:
    process: BrokerProcess
    tail: EventTail
    failovers: list[FailoverDone] = field(default_factory=list)
    expected_running: bool = False


class BrokerFleet:
    """Broker processes 1..n on one ZooKeeper endpoint (its TLS too), sharing `run_dir`."""

    def __init__(
        self,
        broker_ids: list[int],
        zk: ZkEndpoint,
        run_dir: Path,
        session_timeout_ms: int,
        tls_dir: Path | None = None,
    ) -> None:
        self.run_dir = run_dir
        self._members = {
            broker_id: _Member(
                BrokerProcess(
                    broker_id, zk.connect, run_dir, session_timeout_ms, tls_dir, zk.tls_dir
                ),
                EventTail(event_log_path(run_dir, f"broker{broker_id}")),
            )
            for broker_id in broker_ids
        }

    @property
    def broker_ids(self) -> list[int]:
        """Every broker id, sorted."""
        return sorted(self._members)

    def event_log(self, broker_id: int) -> Path:
        """Where broker `broker_id` writes its events."""
        return self._members[broker_id].tail.path

    def process(self, broker_id: int) -> BrokerProcess:
        """Broker `broker_id`'s process handle."""
        return self._members[broker_id].process

    # -- lifecycle -------------------------------------------------------------------------

    def start(self, broker_id: int, *extra_args: str) -> None:
        """Launch one broker (does not wait for it to register); extra arguments given
        once are kept for its restarts."""
        member = self._members[broker_id]
        member.process.start(*extra_args)
        member.expected_running = True

    def start_all(self) -> None:
        """Launch every broker, one right after the other."""
        for broker_id in self.broker_ids:
            self.start(broker_id)

    def kill(self, broker_id: int) -> float:
        """SIGKILL one broker; returns the wall-clock time (s) just before the signal."""
        member = self._members[broker_id]
        member.expected_running = False
        killed_at = time.time()
        member.process.kill()
        return killed_at

    def terminate(self, broker_id: int, timeout: float) -> int:
        """SIGTERM one broker and wait for it to exit (controlled shutdown); its exit code."""
        member = self._members[broker_id]
        member.expected_running = False
        return member.process.terminate(timeout)

    def kill_all(self) -> None:
        """SIGKILL every broker this fleet started (safe to call more than once)."""
        for member in self._members.values():
            member.expected_running = False
            member.process.kill()

    # -- waiting ---------------------------------------------------------------------------

    def wait_registered(self, broker_ids: list[int], timeout: float) -> None:
        """Until each broker's health file names its port (written once registered)."""
        wait_until(
            lambda: self.check_alive() and all(self.process(b).port() for b in broker_ids),
            timeout=timeout,
            message=lambda: (
                "brokers did not register: "
                + ", ".join(f"{b}" for b in broker_ids if not self.process(b).port())
                + self._log_tails(broker_ids)
            ),
            interval=POLL_INTERVAL_S,
        )

    def wait_failover_done(self, after_epoch: int, timeout: float) -> FailoverDone:
        """Until some broker reports `controller_failover_done` with an epoch above
        `after_epoch`; returns the earliest such event."""
        return wait_until(
            lambda: self.check_alive() and self._failover_after(after_epoch),
            timeout=timeout,
            message=lambda: (
                f"no controller_failover_done with controller epoch > {after_epoch}"
                + self._log_tails(self.broker_ids)
            ),
            interval=POLL_INTERVAL_S,
        )

    def wait_quiet(self, quiet_s: float, timeout: float) -> float:
        """Until no event log has grown for `quiet_s` seconds (controller and brokers done
        with the requests of the last change); returns how long that took."""
        started = time.monotonic()
        sizes = self._log_sizes()
        last_change = started

        def settled() -> bool:
            nonlocal sizes, last_change
            self.check_alive()
            now_sizes = self._log_sizes()
            if now_sizes != sizes:
                sizes, last_change = now_sizes, time.monotonic()
            return time.monotonic() - last_change >= quiet_s

        wait_until(
            settled,
            timeout=timeout,
            message=f"the event logs kept growing: no {quiet_s:.1f} s of quiet",
            interval=POLL_INTERVAL_S,
        )
        return time.monotonic() - started

    def event_tail(self, broker_id: int) -> EventTail:
        """A reader of the events broker `broker_id` writes from now on."""
        tail = EventTail(self.event_log(broker_id))
        tail.new_lines()  # what was written before the call does not count
        return tail

    def wait_event(
        self,
        broker_id: int,
        kind: EventKind,
        timeout: float,
        tail: EventTail | None = None,
        /,
        **fields: object,
    ) -> dict[str, Any]:
        """The first `kind` event broker `broker_id` writes from now on (or that `tail`,
        an `event_tail` of it, has not read yet) whose fields hold `fields` (a list field
        holds a value when it contains it). Waits for events that follow one another
        share a tail: one written while the earlier wait was returning still counts."""
        if tail is None:
            tail = self.event_tail(broker_id)
        marker = _kind_marker(kind)

        def found() -> dict[str, Any] | None:
            self.check_alive()
            lines = tail.new_lines()
            for i, line in enumerate(lines):
                if marker in line:
                    event: dict[str, Any] = json.loads(line)
                    if all(_holds(event.get(k), v) for k, v in fields.items()):
                        tail.unread(lines[i + 1 :])  # for the next wait on this tail
                        return event
            return None

        return wait_until(
            found,
            timeout=timeout,
            message=f"broker {broker_id} wrote no {kind} event with {fields}",
            interval=POLL_INTERVAL_S,
        )

    def wait_total(
        self,
        broker_id: int,
        kind: EventKind,
        counted: str,
        total: int,
        timeout: float,
        /,
        **fields: object,
    ) -> None:
        """Until the `kind` events broker `broker_id` writes from now on whose fields hold
        `fields` add up to `total` in their `counted` field (e.g. the partitions of
        `partition_state_change` events to OnlinePartition)."""
        tail = EventTail(self.event_log(broker_id))
        tail.new_lines()
        marker = _kind_marker(kind)
        seen = 0

        def reached() -> bool:
            nonlocal seen
            self.check_alive()
            for line in tail.new_lines():
                if marker in line:
                    event = json.loads(line)
                    if all(_holds(event.get(k), v) for k, v in fields.items()):
                        seen += int(event.get(counted, 0))
            return seen >= total

        wait_until(
            reached,
            timeout=timeout,
            message=lambda: f"broker {broker_id}: {kind} events add up to {seen} of {total}",
            interval=POLL_INTERVAL_S,
        )

    def check_alive(self) -> bool:
        """True; `BrokerDiedError` with the log tail if a broker that should be running has
        exited."""
        for broker_id, member in self._members.items():
            if member.expected_running and not member.process.is_running():
                raise BrokerDiedError(
                    f"broker {broker_id} exited with code {member.process.returncode()}; "
                    f"tail of {member.process.log_path}:\n{member.process.log_tail()}"
                )
        return True

    # -- internals -------------------------------------------------------------------------

    def _failover_after(self, after_epoch: int) -> FailoverDone | None:
        for broker_id, member in self._members.items():
            for line in member.tail.new_lines():
                if _FAILOVER_DONE in line:
                    member.failovers.append(FailoverDone(broker_id, json.loads(line)))
        found = [
            done
            for member in self._members.values()
            for done in member.failovers
            if done.controller_epoch > after_epoch
        ]
        return min(found, key=lambda d: d.controller_epoch) if found else None

    def _log_sizes(self) -> dict[int, int]:
        return {broker_id: m.tail.size() for broker_id, m in self._members.items()}

    def _log_tails(self, broker_ids: list[int]) -> str:
        parts = [
            f"\n--- broker {b} ({self.process(b).log_path}):\n{self.process(b).log_tail(15)}"
            for b in broker_ids
        ]
        return "".join(parts)
