"""The specifications' invariants over the replica audit (`rundir.invariants.spec_audit`,
`rundir.invariants.replication`): `log_matching`, `weak_isr`, `strong_isr`, each broken
by a hand-made audit (the audit rows named), clean, allowed under unclean leader
election, and not judged without an audit; `chaos check` reads `audit.json`."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.testing import write_run
from rundir.audit import AuditedRange, ReplicaReport, audit_document
from rundir.check_report import EXIT_BROKEN, check_run
from rundir.invariants.replication import AUDIT_INVARIANTS, audit_invariants
from rundir.invariants.spec_audit import final_isrs, log_matching, strong_isr, weak_isr
from rundir.invariants.testing import EventLogBuilder
from rundir.layout import RunDir
from rundir.reader import audit_of


def _row(
    broker: int,
    ranges: list[tuple[int, int, int, str]],
    *,
    hw: int = 10,
    leader: int = 1,
    topic: str = "t",
) -> ReplicaReport:
    epochs = tuple(AuditedRange(e, s, n, d) for e, s, n, d in ranges)
    return ReplicaReport(
        broker, topic, 0, leader, 2, 0, max((n for _, _, n, _ in ranges), default=0), hw, epochs
    )


CLEAN = [
    _row(1, [(1, 0, 6, "aa"), (2, 6, 10, "bb")]),
    _row(2, [(1, 0, 6, "aa"), (2, 6, 10, "bb")]),
    _row(3, [(1, 0, 6, "aa"), (2, 6, 10, "bb")]),
]


def _isr(*members: int) -> EventLogBuilder:
    b = EventLogBuilder()
    b.leader_elected("broker3", 0, 1, 2, 2)
    b.leader_isr_changed("broker1", 0, 1, 2, 3, isr=members)
    return b


def test_a_clean_audit_breaks_nothing() -> None:
    logs = _isr(1, 2, 3).logs()
    results = audit_invariants(CLEAN, logs, unclean_leader_election=False)
    assert [r.name for r in results] == list(AUDIT_INVARIANTS)
    assert all(r.status() == "ok" and r.checked == 1 for r in results)


def test_the_leaders_own_isr_wins_over_the_controllers() -> None:
    assert final_isrs(_isr(1, 2).logs()) == {("t", 0, 2): (1, 2)}


def test_two_replicas_with_other_records_at_the_same_offsets_are_named() -> None:
    audit = [*CLEAN[:2], _row(3, [(1, 0, 6, "aa"), (2, 6, 10, "XX")])]
    result = log_matching(audit, unclean_leader_election=False)
    assert result.status() == "VIOLATED"
    [violation] = result.violations
    assert violation.subject == "t-0 leader epoch 2"
    assert "audit row broker 3 6..10 XX" in violation.explanation
    assert "audit row broker 1 6..10 bb" in violation.explanation
    allowed = log_matching(audit, unclean_leader_election=True)
    assert allowed.status() == "allowed"


def test_a_lagging_replica_is_not_a_log_matching_violation() -> None:
    audit = [*CLEAN[:2], _row(3, [(1, 0, 6, "aa"), (2, 6, 8, "b-")])]
    assert log_matching(audit, unclean_leader_election=False).status() == "ok"


def test_an_isr_member_without_the_committed_records_is_named() -> None:
    audit = [*CLEAN[:2], _row(3, [(1, 0, 6, "aa"), (2, 6, 8, "b-")])]
    result = weak_isr(audit, _isr(1, 2, 3).logs())
    [violation] = result.violations
    assert "ISR member 3 ends at 8, below the leader 1's high watermark 10" in str(violation)
    assert "audit row broker 3 t-0" in violation.explanation
    assert weak_isr(audit, _isr(1, 2).logs()).ok  # broker 3 left the ISR


def test_isr_members_disagreeing_below_the_high_watermark_are_named() -> None:
    audit = [*CLEAN[:2], _row(3, [(1, 0, 6, "ZZ"), (2, 6, 10, "bb")])]
    logs = _isr(1, 2, 3).logs()
    result = strong_isr(audit, logs, unclean_leader_election=False)
    assert result.status() == "VIOLATED"
    [violation] = result.violations
    assert violation.subject == "t-0 leader epoch 1"
    assert "ISR member 3 holds broker 3 [0, 6) ZZ" in violation.explanation
    assert strong_isr(audit, logs, unclean_leader_election=True).status() == "allowed"


def test_records_above_the_high_watermark_may_differ() -> None:
    audit = [_row(1, [(1, 0, 6, "aa"), (2, 6, 10, "bb")], hw=6), _row(2, [(1, 0, 6, "aa")], hw=6)]
    logs = _isr(1, 2).logs()
    assert strong_isr(audit, logs, unclean_leader_election=False).ok
    assert weak_isr(audit, logs).ok


def test_a_partition_whose_isr_was_never_logged_is_named_in_the_note() -> None:
    result = weak_isr(CLEAN, EventLogBuilder().logs())
    assert result.ok
    assert result.checked == 0
    assert "t-0 (no ISR logged at epoch 2)" in result.note


def test_without_an_audit_the_audit_invariants_are_not_judged() -> None:
    results = audit_invariants(None, {}, unclean_leader_election=False)
    assert [r.status() for r in results] == ["not judged"] * 3
    assert all("no audit.json" in r.note for r in results)


def _write_audit(run: Path, rows: list[ReplicaReport]) -> None:
    document = audit_document("t", 0, rows, {})
    RunDir(run).audit.write_text(json.dumps(document), encoding="utf-8")


def test_check_judges_the_run_directorys_audit(tmp_path: Path) -> None:
    write_run(tmp_path, "r")
    run = tmp_path / "r"
    _write_audit(run, [_row(1, [(1, 0, 6, "aa")]), _row(2, [(1, 0, 6, "XX")])])
    assert audit_of(run) is not None
    report = check_run(run)
    assert report.exit_code == EXIT_BROKEN
    assert report.verdict.result("log_matching").status() == "VIOLATED"


def test_an_unreadable_audit_leaves_its_invariants_not_judged(tmp_path: Path) -> None:
    write_run(tmp_path, "r")
    run = tmp_path / "r"
    RunDir(run).audit.write_text("{", encoding="utf-8")
    report = check_run(run)
    assert report.verdict.result("log_matching").status() == "not judged"
    assert "audit.json" in report.verdict.result("log_matching").note
    assert report.verdict.result("run_dir_complete").status() == "VIOLATED"
