"""`testbed configs` without ZooKeeper: the options (well-formed and malformed, and the
parser's own checks), Kafka's merge of additions and deletions with its validation, and
the exact describe and alter lines."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from testbed.arguments import build_parser
from testbed.configs import (
    ConfigsCommandError,
    altered_config,
    parse_add_config,
    parse_delete_config,
    render_altered,
    render_description,
)
from zkdata.topic_configs import KAFKA_TOPIC_CONFIGS, InvalidConfigError

# -- --add-config and --delete-config -----------------------------------------------------


def test_add_config_pairs_are_stripped_and_a_later_key_wins() -> None:
    entries = ["retention.ms=1000, min.insync.replicas = 2", "retention.ms=5,segment.ms="]
    assert parse_add_config(entries) == {
        "retention.ms": "5",
        "min.insync.replicas": "2",
        "segment.ms": "",
    }


def test_add_config_value_keeps_everything_after_the_first_equals() -> None:
    assert parse_add_config(["message.format.version=a=b"]) == {"message.format.version": "a=b"}


def test_no_add_config_is_no_addition() -> None:
    assert parse_add_config([]) == {}


@pytest.mark.parametrize(
    ("entries", "entry"),
    [
        pytest.param(["retention.ms"], "'retention.ms'", id="no-equals"),
        pytest.param(["=1"], "'=1'", id="empty-key"),
        pytest.param([" =1"], "' =1'", id="blank-key"),
        pytest.param(["retention.ms=1,"], "''", id="trailing-comma"),
        pytest.param(["a=1,,b=2"], "''", id="empty-entry"),
        pytest.param([""], "''", id="empty-option"),
        pytest.param(["cleanup.policy=[compact,delete]"], "'delete]'", id="bracket-list"),
    ],
)
def test_malformed_add_config(entries: list[str], entry: str) -> None:
    with pytest.raises(ConfigsCommandError, match="expected key=value") as info:
        parse_add_config(entries)
    assert str(info.value).startswith(f"Invalid config {entry} in --add-config ")


def test_delete_config_names_in_order_each_once() -> None:
    assert parse_delete_config(["b, a", "b,c"]) == ("b", "a", "c")


@pytest.mark.parametrize("text", ["", "a,", ",a", "a,,b", " "])
def test_malformed_delete_config(text: str) -> None:
    with pytest.raises(ConfigsCommandError, match="expected config names separated by ','"):
        parse_delete_config([text])


_names = st.sampled_from(sorted(KAFKA_TOPIC_CONFIGS))
_values = st.text(st.characters(exclude_characters=",=", exclude_categories=["Cs"])).map(str.strip)


@given(st.dictionaries(_names, _values, min_size=1))
def test_add_config_reads_back_what_describe_prints(config: dict[str, str]) -> None:
    """The pairs of a describe line, given to --add-config, are the same overrides."""
    line = render_description("t", config)
    assert parse_add_config([line.removeprefix("Configs for topic 't' are ")]) == config


# -- the merge ----------------------------------------------------------------------------


def test_additions_then_deletions_over_the_current_overrides() -> None:
    current = {"retention.ms": "1", "segment.ms": "2", "cleanup.policy": "delete"}
    assert altered_config(
        current, {"retention.ms": "9", "min.insync.replicas": "2"}, ("segment.ms",)
    ) == {"retention.ms": "9", "cleanup.policy": "delete", "min.insync.replicas": "2"}


def test_a_name_both_added_and_deleted_is_deleted() -> None:
    assert altered_config({"retention.ms": "1"}, {"retention.ms": "2"}, ("retention.ms",)) == {}


def test_the_current_overrides_are_not_modified() -> None:
    current = {"retention.ms": "1"}
    altered_config(current, {"segment.ms": "2"}, ("retention.ms",))
    assert current == {"retention.ms": "1"}


def test_deleting_names_that_are_not_set_lists_them_all() -> None:
    with pytest.raises(ConfigsCommandError) as info:
        altered_config({"retention.ms": "1"}, {}, ("segment.ms", "retention.ms", "flush.ms"))
    assert str(info.value) == "Invalid config(s): segment.ms,flush.ms"


def test_deleting_a_name_added_by_the_same_alter_is_refused() -> None:
    """As in Kafka, deletions are checked against the overrides before the additions."""
    with pytest.raises(ConfigsCommandError, match=r"^Invalid config\(s\): segment\.ms$"):
        altered_config({}, {"segment.ms": "1"}, ("segment.ms",))


@pytest.mark.parametrize(
    ("current", "additions", "message"),
    [
        pytest.param({}, {"retention.msec": "1"}, "Unknown topic config name", id="unknown"),
        pytest.param({}, {"min.insync.replicas": "0"}, "min.insync.replicas", id="min-isr-0"),
        pytest.param(
            {}, {"unclean.leader.election.enable": "yes"}, "expected true or false", id="unclean"
        ),
        pytest.param(
            {"legacy.name": "1"}, {"retention.ms": "1"}, "legacy.name", id="unknown-already-set"
        ),
    ],
)
def test_a_result_kafka_would_refuse_is_refused(
    current: dict[str, str], additions: dict[str, str], message: str
) -> None:
    with pytest.raises(InvalidConfigError, match=message):
        altered_config(current, additions, ())


def test_deleting_an_unknown_name_that_is_set_repairs_the_overrides() -> None:
    assert altered_config({"legacy.name": "1", "retention.ms": "1"}, {}, ("legacy.name",)) == {
        "retention.ms": "1"
    }


# -- output -------------------------------------------------------------------------------


def test_describe_line_sorts_the_keys() -> None:
    line = render_description("orders", {"segment.ms": "2", "cleanup.policy": "compact"})
    assert line == "Configs for topic 'orders' are cleanup.policy=compact,segment.ms=2"


def test_describe_line_without_overrides_ends_after_are() -> None:
    assert render_description("orders", {}) == "Configs for topic 'orders' are "


def test_alter_line() -> None:
    assert render_altered("orders") == "Completed updating config for topic orders."


# -- the parser ---------------------------------------------------------------------------


def test_parser_collects_repeated_add_and_delete_options() -> None:
    args = build_parser().parse_args(
        [
            "configs",
            "--entity-type",
            "topics",
            "--entity-name",
            "t",
            "--alter",
            "--add-config",
            "a=1",
            "--add-config",
            "b=2",
            "--delete-config",
            "c",
        ]
    )
    assert (args.alter, args.describe, args.entity_name) == (True, False, "t")
    assert (args.add_config, args.delete_config) == (["a=1", "b=2"], ["c"])


def test_parser_allows_describe_without_a_name() -> None:
    args = build_parser().parse_args(["configs", "--entity-type", "topics", "--describe"])
    assert (args.describe, args.entity_name) == (True, None)


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["--entity-type", "brokers", "--describe"], id="other-entity-type"),
        pytest.param(["--describe"], id="no-entity-type"),
        pytest.param(["--entity-type", "topics"], id="neither-describe-nor-alter"),
        pytest.param(["--entity-type", "topics", "--describe", "--alter"], id="both"),
    ],
)
def test_parser_refuses(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["configs", *argv])
    assert info.value.code == 2
    assert "usage:" in capsys.readouterr().err
