"""The `request` fault as data and the proxy's pure decisions: its plan refuses what it
cannot do, it rebuilds from its description and from a schedule step, the decider
chooses by kind, count and seeded probability, a reorder holds one request per kind until
the next of that kind passes, a late copy's stale partitions are named, and the fault is
in effect once it acted on a request, or when armed once its proxy and redirect are in
place."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chaos.errors import BadParams, FaultError
from chaos.faults import request as request_module
from chaos.faults.base import FaultTarget
from chaos.faults.fields import BadFaultData
from chaos.faults.registry import FAULT_TYPES, fault_from_json
from chaos.faults.request import RequestFault
from chaos.faults.request_plan import (
    KINDS,
    Decider,
    Decision,
    RequestPlan,
    delivered_epochs,
    forget_deleted,
    parse_kinds,
    raced_deletion,
    stale_partitions,
)
from chaos.faults.rules import redirect_unless_owner
from chaos.generator.random_mix import MIX_KINDS, random_mix
from chaos.generator.schedule import FaultSpec
from rpc import messages as m
from rpc import wire
from rpc.wire.relay import summarize

LAI, UM, SR = KINDS
_RECORD = {"step": "drop", "kind": "LeaderAndIsr", "controller_epoch": 3, "partitions": 2}


def test_kinds_parse_in_a_fixed_order_and_all_means_every_kind() -> None:
    assert parse_kinds("all") == KINDS
    assert parse_kinds("StopReplica, LeaderAndIsr") == (LAI, SR)


@pytest.mark.parametrize("text", ["", ",", "Fetch", "LeaderAndIsr,Produce"])
def test_unknown_or_empty_kinds_are_refused_by_name(text: str) -> None:
    with pytest.raises(BadFaultData, match="kinds must be"):
        parse_kinds(text)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"action": "corrupt"}, "action"),
        ({"kinds": ()}, "kinds"),
        ({"count": -1}, "count"),
        ({"count": True}, "count"),
        ({"probability": 0}, "probability"),
        ({"probability": 1.5}, "probability"),
        ({"delay_ms": -5}, "delay_ms"),
        ({"delay_ms": 1.5}, "delay_ms"),
        ({"hold_s": 0}, "hold_s"),
        ({"seed": "x"}, "seed"),
    ],
)
def test_a_plan_refuses_what_it_cannot_do(changes: dict[str, Any], message: str) -> None:
    fields: dict[str, Any] = {"action": "drop"} | changes
    with pytest.raises(BadFaultData, match=message):
        RequestPlan(**fields)


def test_count_bounds_how_many_requests_are_chosen() -> None:
    decider = Decider(RequestPlan("drop", (LAI,), count=2))
    decisions = [decider.decide(k) for k in (UM, LAI, SR, LAI, LAI)]
    assert decisions == [Decision.PASS, Decision.DROP, Decision.PASS, Decision.DROP, Decision.PASS]
    assert decider.chosen == 2


def test_count_zero_chooses_every_request_of_the_kinds() -> None:
    decider = Decider(RequestPlan("duplicate", KINDS, count=0))
    assert {decider.decide(k) for k in KINDS * 20} == {Decision.DUPLICATE}


@given(st.integers(0, 2**32), st.floats(0.05, 0.95))
def test_probability_draws_are_seeded_and_about_the_probability(seed: int, p: float) -> None:
    plan = RequestPlan("delay", (LAI,), count=0, probability=p, seed=seed)
    first = [Decider(plan).decide(LAI) for _ in range(1)]
    decider, again = Decider(plan), Decider(plan)
    runs = [decider.decide(LAI) for _ in range(2000)]
    assert runs == [again.decide(LAI) for _ in range(2000)]
    assert first[0] == runs[0]
    share = runs.count(Decision.DELAY) / len(runs)
    assert abs(share - p) < 0.06


def test_a_reorder_holds_one_request_per_kind_until_the_next_of_its_kind() -> None:
    decider = Decider(RequestPlan("reorder", (LAI, SR), count=0))
    assert decider.decide(LAI) is Decision.HOLD
    assert decider.decide(SR) is Decision.HOLD
    assert decider.decide(UM) is Decision.PASS  # not a chosen kind
    assert decider.decide(LAI) is Decision.PASS_THEN_RELEASE
    assert decider.decide(LAI) is Decision.HOLD  # nothing held: chosen again
    assert decider.release(SR) is True
    assert decider.release(SR) is False
    assert decider.decide(SR) is Decision.HOLD


def test_a_held_request_waits_for_a_newer_one_about_one_of_its_partitions() -> None:
    decider = Decider(RequestPlan("reorder", (LAI,), count=0))
    assert decider.decide(LAI, [("t", 0), ("t", 1)]) is Decision.HOLD
    assert decider.decide(LAI, [("t", 2)]) is Decision.PASS  # not chosen while one is held
    assert decider.decide(LAI, [("u", 0)]) is Decision.PASS
    assert decider.decide(LAI, [("t", 2), ("t", 1)]) is Decision.PASS_THEN_RELEASE
    assert decider.chosen == 1


def test_a_request_that_overtakes_a_held_one_is_not_counted() -> None:
    decider = Decider(RequestPlan("reorder", (LAI,), count=1))
    assert [decider.decide(LAI) for _ in range(3)] == [
        Decision.HOLD,
        Decision.PASS_THEN_RELEASE,
        Decision.PASS,
    ]
    assert decider.chosen == 1


def test_stale_partitions_are_those_not_newer_than_what_was_delivered() -> None:
    delivered = {("t", 0): 3, ("t", 1): 5}
    request = [("t", 0, 3), ("t", 1, 6), ("t", 2, 0), ("t", 0, -2), ("t", 1, 4)]
    assert stale_partitions(request, delivered) == [("t", 0, 3), ("t", 1, 4)]


def test_only_a_leader_and_isr_sets_the_epoch_a_late_copy_is_stale_against() -> None:
    # the witness of a run that flagged a late LeaderAndIsr of epoch 1 as obeyed-stale: the
    # broker had been sent epoch 1 of those partitions only in an UpdateMetadata
    side = [("t-side", 1, 1), ("t-side", 2, 1)]
    after_metadata = delivered_epochs({}, "UpdateMetadata", side)
    after_stop = delivered_epochs(after_metadata, "StopReplica", [("t-side", 1, 1)])
    assert after_stop == {}
    assert stale_partitions(side, after_stop) == []
    after_leader = delivered_epochs(after_stop, "LeaderAndIsr", [("t-side", 1, 1), ("t", 0, -1)])
    assert after_leader == {("t-side", 1): 1}
    assert stale_partitions(side, after_leader) == [("t-side", 1, 1)]
    older = delivered_epochs(after_leader, "LeaderAndIsr", [("t-side", 1, 0)])
    assert older == {("t-side", 1): 1}


def test_a_deleted_partition_forgets_its_delivered_epoch() -> None:
    # the witness of a blind hunt's run: a reassignment deleted a replica of the side topic
    # on the broker, then the late copy of the LeaderAndIsr that had created it (epoch 1)
    # created it again; Kafka 2.x's broker keeps nothing of a deleted partition either
    delivered = delivered_epochs({}, "LeaderAndIsr", [("t-side", 2, 1), ("t", 0, 4)])
    after_delete = forget_deleted(delivered, [("t-side", 2)])
    assert after_delete == {("t", 0): 4}
    assert stale_partitions([("t-side", 2, 1), ("t", 0, 4)], after_delete) == [("t", 0, 4)]
    assert forget_deleted(delivered, [("u", 9)]) == delivered


def test_a_late_copy_whose_span_meets_a_deletions_raced_it() -> None:
    stale = [("t", 0, 3), ("t", 1, 3), ("t", 2, 3), ("t", 3, 3)]
    deletions = {
        ("t", 0): (1.0, 2.0),  # answered before the copy was sent: ordered
        ("t", 1): (4.0, 6.0),  # within the copy's span
        ("t", 2): (2.5, None),  # still in flight
        ("t", 3): (9.0, 9.5),  # sent after the copy's answer: ordered
    }
    assert raced_deletion(stale, deletions, sent=3.0, answered=5.0) == [("t", 1, 3), ("t", 2, 3)]


def test_a_summary_names_what_a_stop_replica_deletes() -> None:
    header = m.ControlHeader(1, 15, 7)
    states = (
        m.StopReplicaPartitionState("t-side", 2, 1, True),
        m.StopReplicaPartitionState("t", 0, 4, False),
    )
    body = wire.stop_replica_request_to_pb(m.StopReplicaRequest(header, states))
    summary = summarize("StopReplica", body.SerializeToString())
    assert summary.deleted == (("t-side", 2),)
    assert summary.partitions == (("t-side", 2, 1), ("t", 0, 4))


def test_the_fault_rebuilds_from_its_description_through_json() -> None:
    fault = RequestFault(("broker2",), "reorder", "LeaderAndIsr,StopReplica", 3, 0.5, 0, 12.0, 7)
    rebuilt = fault_from_json("request", json.loads(json.dumps(fault.describe())))
    assert rebuilt == fault
    assert rebuilt.fault_id == fault.fault_id
    assert fault.plan() == RequestPlan("reorder", (LAI, SR), 3, 0.5, 0, 12.0, 7)


def test_a_step_fills_in_every_param_and_builds_the_fault() -> None:
    spec = FaultSpec.of("request", "non-controller", {"action": "drop", "count": 2})
    assert dict(spec.params) == {
        "action": "drop",
        "count": 2,
        "delay_ms": 2000,
        "hold_s": 30.0,
        "kinds": "all",
        "probability": 1.0,
        "seed": 0,
        "effect": "acted",
    }
    assert spec.fault(("broker3",)) == RequestFault(("broker3",), "drop", "all", count=2)


@pytest.mark.parametrize(
    "params",
    [
        {"action": "corrupt"},
        {"kinds": "Fetch"},
        {"count": -1},
        {"probability": 2},
        {"effect": "sometimes"},
    ],
)
def test_a_step_with_bad_params_is_refused(params: dict[str, Any]) -> None:
    with pytest.raises(BadParams, match=next(iter(params))):
        FaultSpec.of("request", "non-controller", params)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"targets": ["broker1", "broker2"]}, "one broker"),
        ({"targets": ["zk1"]}, "not a broker"),
        ({"targets": ["broker1"], "action": "corrupt"}, "action"),
        ({"targets": ["broker1"], "delay": 5}, "unknown fields"),
        ({"targets": ["broker1"], "effect": "later"}, "effect must be one of"),
    ],
)
def test_bad_descriptions_are_refused(data: dict[str, Any], message: str) -> None:
    with pytest.raises(FaultError, match=message):
        fault_from_json("request", data)


def test_the_redirect_spares_the_proxys_own_user() -> None:
    rule = redirect_unless_owner("10.0.0.4", 9092, 40000, 0)
    argv = rule.argv("-A", "request-abc")
    assert argv[argv.index("--uid-owner") - 1] == "!"
    assert argv[argv.index("--uid-owner") + 1] == "0"
    assert argv[argv.index("--to-ports") + 1] == "40000"


def test_the_random_mix_draws_the_request_fault_only_when_asked() -> None:
    assert "request" in FAULT_TYPES
    assert "request" not in MIX_KINDS
    schedule = random_mix(3, 120, kinds=("request", "kill"))
    drawn = [s.fault for s in schedule.steps if s.fault.kind == "request"]
    assert drawn
    for spec in drawn:
        assert dict(spec.params)["action"] in ("drop", "delay", "duplicate", "reorder")
        # a drawn fault is in effect once armed: no request may come while it lasts
        assert dict(spec.params)["effect"] == "armed"


@pytest.mark.parametrize(
    ("effect", "proxies", "records", "rules", "ok", "detail"),
    [
        ("acted", {7: "t"}, [], {"broker1": ["-A x"]}, False, "acted on no request yet"),
        ("armed", {7: "t"}, [], {"broker1": ["-A x"]}, True, "armed: proxy [7]"),
        ("armed", {7: "t"}, [], {}, False, "no redirect is in place"),
        ("armed", {}, [], {"broker1": ["-A x"]}, False, "no proxy running"),
        ("acted", {7: "t"}, [_RECORD], {"broker1": ["-A x"]}, True, "drop LeaderAndIsr"),
        ("armed", {7: "t"}, [_RECORD], {"broker1": ["-A x"]}, True, "drop LeaderAndIsr"),
    ],
)
def test_a_request_fault_is_in_effect_once_it_acted_or_when_armed_once_armed(
    monkeypatch: pytest.MonkeyPatch,
    effect: str,
    proxies: dict[int, str],
    records: list[dict[str, Any]],
    rules: dict[str, list[str]],
    ok: bool,
    detail: str,
) -> None:
    fault = RequestFault(("broker2",), "drop", effect=effect)
    monkeypatch.setattr(RequestFault, "proxies", lambda self, cluster: proxies)
    monkeypatch.setattr(RequestFault, "records", lambda self, cluster: records)
    monkeypatch.setattr(request_module, "leftovers_everywhere", lambda cluster, fid: rules)
    check = fault.took_effect(cast(FaultTarget, object()))
    assert (check.ok, detail in check.detail) == (ok, True), check.detail
    assert fault.trace() == records
