"""The disk layer's rules, counters and mount-table reading, without FUSE: which
operations fail or wait, the budget, the JSON round trip the control socket carries,
and the layer's own accounting (`LayerState`)."""

from __future__ import annotations

import errno

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.disk_layer import LayerState
from harness.disk_layers import mounted
from harness.disk_rules import (
    OPS,
    BadRules,
    ErrorRule,
    LatencyRule,
    LayerCounters,
    LayerRules,
)


def test_the_empty_rules_are_transparent() -> None:
    rules = LayerRules()
    assert rules.transparent
    assert rules.error_for("write", "/t-0/0.log", 0.0) is None
    assert rules.delay_ms("fsync") == 0
    assert not rules.over_budget(10**12, 10**12)


def test_an_error_rule_fails_only_its_operation_on_matching_paths() -> None:
    rules = LayerRules(errors=(ErrorRule("write", "*.log", "EIO", 1.0),))
    assert rules.error_for("write", "/t-0/00.log", 0.99) == errno.EIO
    assert rules.error_for("write", "/t-0/00.index", 0.0) is None
    assert rules.error_for("read", "/t-0/00.log", 0.0) is None


def test_the_probability_decides_by_the_draw() -> None:
    rules = LayerRules(errors=(ErrorRule("fsync", "*", "EIO", 0.25),))
    assert rules.error_for("fsync", "a", 0.2) == errno.EIO
    assert rules.error_for("fsync", "a", 0.25) is None


def test_latency_takes_the_longest_rule_naming_the_operation_or_any() -> None:
    rules = LayerRules(latency=(LatencyRule("any", 5), LatencyRule("fsync", 50)))
    assert rules.delay_ms("fsync") == 50
    assert rules.delay_ms("read") == 5


def test_the_budget_refuses_the_write_that_passes_it() -> None:
    rules = LayerRules(budget_bytes=10)
    assert not rules.over_budget(4, 6)
    assert rules.over_budget(4, 7)


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda: ErrorRule("open"), "op must be"),
        (lambda: ErrorRule("write", errno="EPERM"), "errno must be"),
        (lambda: ErrorRule("write", probability=0), "probability"),
        (lambda: ErrorRule("write", glob=""), "glob"),
        (lambda: LatencyRule("write", 0), "ms must be in"),
        (lambda: LatencyRule("nap", 5), "op must be"),
        (lambda: LayerRules(budget_bytes=-1), "budget_bytes"),
    ],
)
def test_rules_out_of_range_are_refused(make: object, says: str) -> None:
    with pytest.raises(BadRules, match=says):
        make()  # type: ignore[operator]


def test_json_that_is_not_rules_is_refused() -> None:
    with pytest.raises(BadRules, match="unknown rule fields"):
        LayerRules.from_json({"errors": [], "typo": 1})
    with pytest.raises(BadRules, match="malformed rule"):
        LayerRules.from_json({"errors": [{"op": "write", "colour": "red"}]})


@given(
    st.lists(
        st.builds(
            ErrorRule,
            st.sampled_from(OPS),
            st.sampled_from(["*", "*.log", "t-*/0*"]),
            st.sampled_from(["EIO", "ENOSPC"]),
            st.floats(0.01, 1.0),
        ),
        max_size=3,
    ),
    st.lists(st.builds(LatencyRule, st.sampled_from([*OPS, "any"]), st.integers(1, 10_000))),
    st.none() | st.integers(0, 10**12),
)
def test_rules_survive_the_control_sockets_json(
    errors: list[ErrorRule], latency: list[LatencyRule], budget: int | None
) -> None:
    rules = LayerRules(tuple(errors), tuple(latency), budget)
    assert LayerRules.from_json(rules.to_json()) == rules


def test_counters_survive_json_and_sum_over_operations() -> None:
    counters = LayerCounters()
    counters.failed["write"] = 2
    counters.failed["fsync"] = 1
    back = LayerCounters.from_json(counters.to_json())
    assert back == counters
    assert back.total("failed") == 3


def test_the_layer_counts_fails_and_charges_writes_to_the_budget() -> None:
    state = LayerState(seed=1)
    state.set_rules(LayerRules(errors=(ErrorRule("fsync"),), budget_bytes=8))
    assert state.before("write", "a.log", 5) is None
    assert state.before("write", "a.log", 5) == errno.ENOSPC
    assert state.before("fsync", "a.log") == errno.EIO
    counters = state.snapshot()["counters"]
    assert counters["seen"] == {"read": 0, "write": 2, "fsync": 1}
    assert counters["failed"] == {"read": 0, "write": 1, "fsync": 1}
    assert counters["written_bytes"] == 5


def test_new_rules_start_the_counters_again_and_answer_the_old_ones() -> None:
    state = LayerState(seed=1)
    state.set_rules(LayerRules(errors=(ErrorRule("read"),)))
    state.before("read", "x")
    before = state.set_rules(LayerRules())
    assert before["counters"]["failed"]["read"] == 1
    assert state.snapshot()["counters"]["failed"]["read"] == 0
    assert state.snapshot()["rules"] == LayerRules().to_json()


MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw
99 27 0:100 / /var/lib/testbed-disk/p1/broker1/data rw,nosuid - fuse.testbed-disk \
testbed-disk:p1/broker1 rw,user_id=0
100 27 0:101 / /tmp/other rw - fuse.sshfs host:/x rw
"""


def test_layers_are_read_from_the_mount_table_by_type_and_source() -> None:
    found = mounted(MOUNTINFO)
    assert {tag: str(point) for tag, point in found.items()} == {
        "p1/broker1": "/var/lib/testbed-disk/p1/broker1/data"
    }
