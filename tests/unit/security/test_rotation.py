"""A CA rotation as values (`security.rotation`): trust bundles, the passes left, and the
order of the rolling restarts."""

from __future__ import annotations

import pytest

from security.rotation import (
    PHASES,
    Phase,
    RollingStep,
    pem_certificates,
    phases_left,
    rolling_order,
    rolling_steps,
    trust_bundle,
)


def _pem(name: str) -> bytes:
    return f"-----BEGIN CERTIFICATE-----\n{name}\n-----END CERTIFICATE-----\n".encode()


OLD, NEW = _pem("old"), _pem("new")


def test_a_bundle_holds_each_certificate_once_in_order() -> None:
    bundle = trust_bundle(OLD, NEW + OLD)
    assert pem_certificates(bundle) == (OLD.rstrip(b"\n"), NEW.rstrip(b"\n"))
    assert bundle == OLD + NEW


def test_a_bundle_leaves_out_what_is_not_a_certificate() -> None:
    key = b"-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n"
    bundle = trust_bundle(key + OLD)
    assert b"secret" not in bundle
    assert bundle == OLD


def test_a_bundle_needs_a_certificate() -> None:
    with pytest.raises(ValueError, match="at least one certificate"):
        trust_bundle(b"", b"not a certificate")


def test_the_passes_trust_both_then_issue_then_retire() -> None:
    assert PHASES == (Phase.TRUST_BOTH, Phase.NEW_LEAVES, Phase.RETIRE_OLD)
    assert phases_left(None) == PHASES


@pytest.mark.parametrize("done", list(Phase))
def test_a_stopped_rotation_makes_its_pass_again_and_the_rest(done: Phase) -> None:
    left = phases_left(done)
    assert left[0] is done
    assert left == PHASES[PHASES.index(done) :]


def test_services_go_by_number_with_the_one_named_last() -> None:
    assert rolling_order(["zk10", "zk2", "zk1"], None) == ("zk1", "zk2", "zk10")
    assert rolling_order(["zk1", "zk2", "zk3"], "zk1") == ("zk2", "zk3", "zk1")
    assert rolling_order(["zk1", "zk2"], "zk9") == ("zk1", "zk2")


def test_a_pass_restarts_zookeeper_first_leader_and_controller_last() -> None:
    steps = rolling_steps(
        Phase.NEW_LEAVES,
        ("zk1", "zk2", "zk3"),
        ("broker1", "broker2", "broker3"),
        zk_leader="zk2",
        controller="broker1",
    )
    assert [s.service for s in steps] == [
        "zk1",
        "zk3",
        "zk2",
        "broker2",
        "broker3",
        "broker1",
    ]
    assert {s.phase for s in steps} == {Phase.NEW_LEAVES}
    assert RollingStep(Phase.TRUST_BOTH, "zk1").describe() == "trust-both: restart zk1"
