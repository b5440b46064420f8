"""The lost-reply spell against a fake cluster and a scripted wire: the answer is dropped
before the leader thaws, the connection is closed only after, and whatever happens the
leader is thawed and the rules are gone."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chaos.errors import FaultFailed
from chaos.faults import lost_reply_spell as lost_reply
from chaos.faults import registry
from chaos.faults.base import Check
from chaos.faults.fields import BadFaultData
from chaos.faults.lost_reply import ZkLostReply
from chaos.faults.lost_reply_spell import perform_spell, perform_spells, series_check
from chaos.faults.tcp_watch import TcpConnection
from chaos.faults.testing import FakeCluster

BEFORE = TcpConnection(40000, "10.0.0.2", 2181, 1000, 500, 900, 800)
WAITING = TcpConnection(40000, "10.0.0.2", 2181, 1150, 500, 150, 1100)


class FakeClock:
    """Time that passes only when slept."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class ScriptedWire:
    """Answers `connections` from a script (the last sample repeats), counts drops only
    once the leader has thawed, and logs every call beside the leader's docker state."""

    def __init__(self, cluster: FakeCluster, samples: list[list[TcpConnection]]) -> None:
        self.cluster = cluster
        self.samples: Iterator[list[TcpConnection]] = iter(samples)
        self.last: list[TcpConnection] = []
        self.log: list[tuple[str, str]] = []
        self.rules = 0
        self.fail_on: str | None = None
        #: What the connection's server holds for it, per sample (the last repeats);
        #: None: it does not say.
        self.queued: Iterator[int | None] = iter([None])
        self.last_queued: int | None = None

    def _note(self, call: str) -> None:
        self.log.append((call, self.cluster.state["zk1"]))
        if call == self.fail_on:
            raise FaultFailed(f"{call} failed")

    def connections(self, broker: str) -> list[TcpConnection]:
        self._note("connections")
        self.last = next(self.samples, self.last)
        return self.last

    def drop_replies(self, broker: str, conn: TcpConnection) -> None:
        self._note("drop_replies")
        self.rules += 1

    def dropped(self, broker: str) -> int:
        self._note("dropped")
        return 2 if self.rules and self.cluster.state["zk1"] == "running" else 0

    def close(self, broker: str, conn: TcpConnection) -> None:
        self._note("close")

    def lift(self) -> None:
        self._note("lift")
        self.rules = 0

    def outstanding(self, broker: str, conn: TcpConnection) -> int | None:
        self.last_queued = next(self.queued, self.last_queued)
        return self.last_queued

    def frozen(self, server: str) -> Check:
        self._note("frozen")
        return Check(self.cluster.state[server] == "paused", f"{server} paused")


def test_a_waiting_write_loses_its_answer_between_the_freeze_and_the_close() -> None:
    cluster, clock = FakeCluster(), FakeClock()
    wire = ScriptedWire(cluster, [[BEFORE], [BEFORE], [WAITING]])
    trace: list[dict[str, Any]] = []
    report = perform_spell(cluster, ["broker2"], 2.5, wire, clock, clock.sleep, trace)
    assert report.leader == "zk1"
    assert [c.unanswered_bytes for c in report.caught] == [150]
    assert report.answers_dropped == {"broker2": 2}
    assert report.check().ok, report.check().detail
    calls = [call for call, _ in wire.log]
    assert calls.index("drop_replies") < calls.index("dropped") < calls.index("close")
    states = dict(wire.log)
    assert states["drop_replies"] == "paused"  # the rule is in before the thaw
    assert states["close"] == "running"  # the connection is closed after it
    assert calls[-1] == "lift"
    assert wire.rules == 0
    assert cluster.state["zk1"] == "running"
    assert report.held_ms < 2500  # the hold ends once every target is caught
    # the trace: the freeze, each sample with what was unanswered, the thaw, the drops
    assert trace[0]["freeze"] == "zk1"
    samples = [r["conns"] for r in trace if "conns" in r]
    assert [conns[0][-2] for conns in samples] == [0, 150]
    assert samples[-1][0][:2] == [WAITING.local_port, WAITING.peer_ip]
    assert [r.get("thaw") for r in trace if "thaw" in r] == ["zk1"]
    assert trace[-1]["dropped"] == {"broker2": 2}


def test_a_spell_that_catches_nothing_holds_for_its_length_and_still_takes_effect() -> None:
    cluster, clock = FakeCluster(), FakeClock()
    wire = ScriptedWire(cluster, [[BEFORE]])
    report = perform_spell(cluster, ["broker2"], 1.0, wire, clock, clock.sleep)
    assert report.caught == ()
    assert report.held_ms >= 1000
    assert "drop_replies" not in dict(wire.log)
    assert "close" not in dict(wire.log)
    check = report.check()
    assert check.ok
    assert "no request went unanswered" in check.detail
    assert cluster.state["zk1"] == "running"


def test_an_answer_that_never_comes_fails_the_check() -> None:
    cluster, clock = FakeCluster(), FakeClock()
    wire = ScriptedWire(cluster, [[BEFORE], [WAITING]])
    wire.dropped = lambda broker: 0  # type: ignore[method-assign]
    report = perform_spell(cluster, ["broker2"], 2.5, wire, clock, clock.sleep)
    assert not report.check().ok
    assert "0 packets of the answer dropped" in report.check().detail


@pytest.mark.parametrize("failing", ["connections", "drop_replies", "frozen", "close"])
def test_the_leader_is_thawed_and_the_rules_lifted_whatever_fails(failing: str) -> None:
    cluster, clock = FakeCluster(), FakeClock()
    wire = ScriptedWire(cluster, [[BEFORE], [WAITING]])
    if failing == "connections":
        wire.samples = iter([[BEFORE]])  # the baseline passes, the first poll fails
        original = wire.connections

        def flaky(broker: str) -> list[TcpConnection]:
            if ("connections", "paused") in wire.log:
                raise FaultFailed("nsenter failed")
            return original(broker)

        wire.connections = flaky  # type: ignore[method-assign]
    else:
        wire.fail_on = failing
    with pytest.raises(FaultFailed):
        perform_spell(cluster, ["broker2"], 2.5, wire, clock, clock.sleep)
    assert cluster.state["zk1"] == "running"
    assert wire.log[-1][0] == "lift"


def test_without_a_leader_nothing_is_frozen() -> None:
    cluster, clock = FakeCluster(), FakeClock()
    cluster.modes["zk1"] = "follower"
    wire = ScriptedWire(cluster, [[BEFORE]])
    with pytest.raises(FaultFailed, match="no ZooKeeper server leads"):
        perform_spell(cluster, ["broker2"], 2.5, wire, clock, clock.sleep)
    assert ("pause", "zk1") not in cluster.calls


def test_spells_follow_one_another_until_one_catches_a_write() -> None:
    cluster, clock = FakeCluster(), FakeClock()
    quiet = [[BEFORE]] * 40  # two spells' worth of samples with nothing waiting
    wire = ScriptedWire(cluster, [*quiet, [BEFORE], [WAITING]])
    reports = perform_spells(cluster, ["broker2"], 1.0, 10.0, wire, clock, clock.sleep)
    assert len(reports) >= 2
    assert [bool(r.caught) for r in reports] == [False] * (len(reports) - 1) + [True]
    check = series_check(reports)
    assert check.ok
    assert check.detail.startswith(f"{len(reports)} spell(s)")
    assert cluster.state["zk1"] == "running"


def test_a_series_stops_when_its_window_is_spent() -> None:
    cluster, clock = FakeCluster(), FakeClock()
    wire = ScriptedWire(cluster, [[BEFORE]])
    reports = perform_spells(cluster, ["broker2"], 1.0, 3.5, wire, clock, clock.sleep)
    assert len(reports) == 3  # the third's hold is cut to what is left of the window
    assert reports[-1].held_ms < 1000
    assert clock.now <= 3.5 + 0.1
    one = perform_spells(cluster, ["broker2"], 1.0, 0.0, wire, clock, clock.sleep)
    assert len(one) == 1


@pytest.mark.parametrize("hold", [0, -1, 3.5, "long"])
def test_a_hold_out_of_range_is_refused(hold: object) -> None:
    with pytest.raises(BadFaultData, match="hold_s"):
        ZkLostReply(("broker1",), hold)  # type: ignore[arg-type]


@pytest.mark.parametrize("window", [-1, 21, "long", True])
def test_a_window_out_of_range_is_refused(window: object) -> None:
    with pytest.raises(BadFaultData, match="window_s"):
        ZkLostReply(("broker1",), 2.0, window)  # type: ignore[arg-type]


def test_before_a_spell_the_fault_has_not_taken_effect() -> None:
    assert not ZkLostReply(("broker1",)).took_effect(FakeCluster()).ok


def test_a_rebuilt_fault_counts_any_paused_server_as_its_own() -> None:
    cluster = FakeCluster()
    cluster.state["zk2"] = "paused"
    fault = ZkLostReply(("broker1",))
    assert fault._frozen_by_it(cluster) == ("zk2",)


def test_a_write_sent_as_the_hold_ends_keeps_the_leader_frozen_until_it_can_tell() -> None:
    cluster, clock = FakeCluster(), FakeClock()
    fresh = TcpConnection(40000, "10.0.0.2", 2181, 1150, 500, 20, 1100)
    # the baseline and 19 quiet polls, then the write is seen 20 ms old as the hold ends
    wire = ScriptedWire(cluster, [[BEFORE]] * 20 + [[fresh], [WAITING]])
    report = perform_spell(cluster, ["broker2"], 1.0, wire, clock, clock.sleep)
    assert [c.unanswered_bytes for c in report.caught] == [150]
    assert 1000 <= report.held_ms <= 1200


def test_a_target_whose_connection_closed_ends_the_hold_early() -> None:
    cluster, clock = FakeCluster(), FakeClock()
    reconnecting = TcpConnection(40001, "10.0.0.3", 2181, 60, 0, 10, 10)
    wire = ScriptedWire(cluster, [[BEFORE], [BEFORE], [reconnecting]])
    report = perform_spell(cluster, ["broker2"], 2.5, wire, clock, clock.sleep)
    assert report.caught == ()
    assert report.lost == ("broker2",)
    assert "broker2: connection closed during the hold" in report.check().detail
    assert report.held_ms < 500
    assert cluster.state["zk1"] == "running"


def test_the_schedule_and_the_fault_take_the_same_bounds() -> None:
    rules = {r.name: r for r in registry.FAULT_TYPES["zk-lost-reply"].params}
    assert rules["hold_s"].default == lost_reply.DEFAULT_HOLD_S
    assert rules["hold_s"].check(lost_reply.MAX_HOLD_S)
    assert not rules["hold_s"].check(lost_reply.MAX_HOLD_S + 0.1)
    assert rules["window_s"].check(lost_reply.MAX_WINDOW_S)
    assert not rules["window_s"].check(lost_reply.MAX_WINDOW_S + 0.1)


def test_a_write_sent_with_a_read_is_caught_by_what_the_follower_holds() -> None:
    """The broker reads a state and writes it in one burst: the read's answer comes back
    at once, so its bytes look answered, but the follower still holds the write."""
    cluster, clock = FakeCluster(), FakeClock()
    burst = TcpConnection(40000, "10.0.0.2", 2181, 1239, 668, 150, 148)
    wire = ScriptedWire(cluster, [[BEFORE], [BEFORE], [burst]])
    wire.queued = iter([0, 0, 1, 1, 1])
    trace: list[dict[str, Any]] = []
    report = perform_spell(cluster, ["broker2"], 2.5, wire, clock, clock.sleep, trace)
    assert [c.local_port for c in report.caught] == [40000]
    assert report.answers_dropped == {"broker2": 2}
    assert report.check().ok, report.check().detail
    held = [r["conns"][0][-1] for r in trace if "conns" in r]
    assert held[:4] == [0, 0, 1, 1]


def test_a_read_the_follower_answers_at_once_is_not_caught() -> None:
    cluster, clock = FakeCluster(), FakeClock()
    read = TcpConnection(40000, "10.0.0.2", 2181, 1080, 640, 150, 148)
    wire = ScriptedWire(cluster, [[BEFORE], [read]])
    wire.queued = iter([0, 1, 0])  # held for one sample only: answered within 50 ms
    report = perform_spell(cluster, ["broker2"], 1.0, wire, clock, clock.sleep)
    assert report.caught == ()


def test_writes_only_passes_over_bytes_the_server_does_not_hold() -> None:
    """A new connection's TLS handshake waits unanswered as a write does; only the
    follower holding the request tells a write."""
    cluster, clock = FakeCluster(), FakeClock()
    for queued, caught in (([0, 0, 0], []), ([0, 0, 1], [150])):
        wire = ScriptedWire(cluster, [[BEFORE], [BEFORE], [WAITING]])
        wire.queued = iter(queued)
        report = perform_spell(
            cluster, ["broker2"], 1.0, wire, clock, clock.sleep, writes_only=True
        )
        assert [c.unanswered_bytes for c in report.caught] == caught
        assert cluster.state["zk1"] == "running"


@pytest.mark.parametrize("writes_only", [1, "yes", None])
def test_writes_only_must_be_a_flag(writes_only: object) -> None:
    with pytest.raises(BadFaultData, match="writes_only"):
        ZkLostReply(("broker1",), 2.0, 0.0, writes_only)  # type: ignore[arg-type]


def test_the_fault_is_built_and_rebuilt_with_writes_only() -> None:
    kind = registry.FAULT_TYPES["zk-lost-reply"]
    fault = kind.build(("broker2",), {"hold_s": 2.5, "window_s": 10, "writes_only": True})
    assert isinstance(fault, ZkLostReply)
    assert fault.params() == {"hold_s": 2.5, "window_s": 10.0, "writes_only": True}
    assert kind.rebuild({"targets": ["broker2"], **fault.params()}) == fault
    default = kind.rebuild({"targets": ["broker2"], "hold_s": 2.5})
    assert isinstance(default, ZkLostReply)
    assert not default.writes_only
