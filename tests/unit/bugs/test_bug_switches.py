"""Bug switches: parsed from a list, unknown names refused, and refused outside chaos
runs and tests."""

from __future__ import annotations

import pytest

from broker_node.config import load_config
from bugs import CATALOG, NO_BUGS, BugSwitchError, bug_named, parse_switches, require_allowed
from bugs.catalog import NO_BROKER_EPOCH, UNFENCED_ZK_WRITES


def test_blank_or_missing_list_is_no_switch() -> None:
    assert parse_switches(None) == NO_BUGS
    assert parse_switches(" , ") == NO_BUGS
    assert not NO_BUGS


def test_names_are_parsed_case_and_space_insensitive() -> None:
    switches = parse_switches(" KAFKA-6082 , kip-380")
    assert switches.on(UNFENCED_ZK_WRITES)
    assert switches.on(NO_BROKER_EPOCH)
    assert switches.render() == "kafka-6082,kip-380"
    assert parse_switches(switches.render()) == switches


def test_unknown_name_is_refused_with_the_known_ones() -> None:
    with pytest.raises(BugSwitchError, match=r"unknown bug switch kafka-9999.*kafka-6082"):
        parse_switches("kafka-6082,kafka-9999")


@pytest.mark.parametrize("context", [None, "", "prod", "chaos-ish"])
def test_switches_are_refused_outside_chaos_and_tests(context: str | None) -> None:
    with pytest.raises(BugSwitchError, match="refused outside chaos runs and tests"):
        require_allowed(parse_switches("kip-101"), context)


@pytest.mark.parametrize("context", ["chaos", "test", " Chaos "])
def test_switches_are_allowed_in_chaos_runs_and_tests(context: str) -> None:
    assert require_allowed(parse_switches("kip-101"), context).on("kip-101")


def test_no_switch_is_allowed_anywhere() -> None:
    assert require_allowed(NO_BUGS, None) == NO_BUGS


def test_catalog_names_are_unique_and_name_a_source() -> None:
    names = [bug.name for bug in CATALOG]
    # the catalog holds at least the 24 historical bugs docs/bugs.md describes
    assert len(names) == len(set(names)) >= 24
    assert all(bug.jiras and bug.mechanism for bug in CATALOG)
    assert bug_named(UNFENCED_ZK_WRITES).jiras == ("KAFKA-6082",)


def test_broker_config_takes_switches_only_with_a_context(
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["--broker-id", "1", "--zk-connect", "zk:2181"]
    assert load_config(base, env={}).bug_switches == NO_BUGS
    config = load_config(base, env={"BUG_SWITCHES": "kip-380", "BUG_SWITCHES_CONTEXT": "chaos"})
    assert config.bug_switches.on(NO_BROKER_EPOCH)
    with pytest.raises(SystemExit) as exit_info:
        load_config([*base, "--bug-switches", "kip-380"], env={})
    assert exit_info.value.code == 2
    assert "refused outside chaos runs and tests" in capsys.readouterr().err
