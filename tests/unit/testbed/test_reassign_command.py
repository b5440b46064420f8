"""`testbed reassign` without ZooKeeper: both JSON files and the broker list (well-formed
and malformed) and the exact output of generate and execute. The proposal and the checks
themselves are `admin.reassignment`'s."""

from __future__ import annotations

import json

import pytest

from domain import TopicPartition
from testbed.reassign import (
    ReassignCommandError,
    parse_broker_list,
    parse_reassignment,
    parse_topics_to_move,
    render_proposal,
    render_reassignment,
    render_started,
)
from zkdata.model import PartitionReassignment

T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)

# -- the topics-to-move file --------------------------------------------------------------


def test_topics_to_move_in_file_order() -> None:
    text = '{"version":1,"topics":[{"topic":"b"},{"topic":"a"}]}'
    assert parse_topics_to_move(text) == ("b", "a")


def test_topics_to_move_without_version_is_version_1() -> None:
    assert parse_topics_to_move('{"topics":[{"topic":"a","extra":1}]}') == ("a",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("{not json", "not JSON", id="bad-json"),
        pytest.param('["a"]', "expected a JSON object", id="not-an-object"),
        pytest.param('{"version":2,"topics":[{"topic":"a"}]}', "unsupported version", id="v2"),
        pytest.param('{"version":"1","topics":[{"topic":"a"}]}', "unsupported version", id="v-str"),
        pytest.param('{"version":1}', "'topics' must be a list", id="no-topics"),
        pytest.param('{"version":1,"topics":{"topic":"a"}}', "must be a list", id="topics-object"),
        pytest.param('{"version":1,"topics":[]}', "'topics' is empty", id="empty"),
        pytest.param('{"version":1,"topics":["a"]}', "must be an object", id="bare-name"),
        pytest.param('{"version":1,"topics":[{"name":"a"}]}', "'topic' of", id="no-topic-key"),
        pytest.param('{"version":1,"topics":[{"topic":7}]}', "not a string", id="topic-int"),
        pytest.param(
            '{"topics":[{"topic":"a"},{"topic":"a"}]}', "topic(s) a listed twice", id="repeated"
        ),
    ],
)
def test_malformed_topics_to_move(text: str, message: str) -> None:
    with pytest.raises(ReassignCommandError, match=r"^topics\.json") as info:
        parse_topics_to_move(text, "topics.json")
    assert message in str(info.value)


# -- the reassignment file ----------------------------------------------------------------


def test_reassignment_in_file_order_with_optional_log_dirs() -> None:
    text = json.dumps(
        {
            "version": 1,
            "partitions": [
                {"topic": "t", "partition": 1, "replicas": [3, 1], "log_dirs": ["any", "any"]},
                {"topic": "t", "partition": 0, "replicas": [2]},
            ],
        }
    )
    assert parse_reassignment(text) == (
        PartitionReassignment(T1, (3, 1)),
        PartitionReassignment(T0, (2,)),
    )


def test_reassignment_keeps_what_the_controller_checks() -> None:
    """Empty, repeated and negative targets parse: execute refuses them with the
    controller's own reasons."""
    text = '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[]},' + (
        '{"topic":"t","partition":0,"replicas":[1,1,-1]}]}'
    )
    assert [r.replicas for r in parse_reassignment(text)] == [(), (1, 1, -1)]


def _file(**entry: object) -> str:
    return json.dumps({"version": 1, "partitions": [entry]})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param('{"version":1,"partitions":[', "not JSON", id="bad-json"),
        pytest.param("[]", "expected a JSON object", id="not-an-object"),
        pytest.param('{"version":2,"partitions":[]}', "unsupported version 2", id="v2"),
        pytest.param('{"version":true,"partitions":[]}', "unsupported version", id="v-bool"),
        pytest.param('{"version":1}', "'partitions' must be a list", id="no-partitions"),
        pytest.param('{"version":1,"partitions":[]}', "'partitions' is empty", id="empty"),
        pytest.param('{"version":1,"partitions":[1]}', "must be an object", id="entry-int"),
        pytest.param(_file(partition=0, replicas=[1]), "'topic' of", id="no-topic"),
        pytest.param(_file(topic="t", replicas=[1]), "'partition' of", id="no-partition"),
        pytest.param(_file(topic="t", partition=0), "'replicas' of", id="no-replicas"),
        pytest.param(_file(topic=1, partition=0, replicas=[1]), "not a string", id="topic-int"),
        pytest.param(
            _file(topic="t", partition="0", replicas=[1]), "not an integer", id="part-str"
        ),
        pytest.param(
            _file(topic="t", partition=True, replicas=[1]), "not an integer", id="part-bool"
        ),
        pytest.param(_file(topic="t", partition=0, replicas=1), "not a list", id="replicas-int"),
        pytest.param(
            _file(topic="t", partition=0, replicas=["1"]), "integer replicas", id="replica-str"
        ),
        pytest.param(_file(topic="t", partition=-1, replicas=[1]), "partition >= 0", id="neg"),
        pytest.param(
            _file(topic="t", partition=0, replicas=[1, 2], log_dirs=["any"]),
            "one entry per replica",
            id="log-dirs-short",
        ),
        pytest.param(
            _file(topic="t", partition=0, replicas=[1], log_dirs="any"),
            "one entry per replica",
            id="log-dirs-not-a-list",
        ),
        pytest.param(
            _file(topic="t", partition=0, replicas=[1, 2], log_dirs=["any", "/data/kafka"]),
            'log directories are not supported (partition t-0 names ["any", "/data/kafka"])',
            id="log-dir-path",
        ),
    ],
)
def test_malformed_reassignment(text: str, message: str) -> None:
    with pytest.raises(ReassignCommandError, match=r"^plan\.json: ") as info:
        parse_reassignment(text, "plan.json")
    assert message in str(info.value)


# -- the broker list ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "brokers"),
    [("1,2,3", (1, 2, 3)), ("3", (3,)), (" 2, 1 ", (2, 1))],
)
def test_broker_list(text: str, brokers: tuple[int, ...]) -> None:
    assert parse_broker_list(text) == brokers


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1,a", "not a comma-separated list of broker ids"),
        ("", "not a comma-separated list of broker ids"),
        ("1,,2", "not a comma-separated list of broker ids"),
        ("1:2", "not a comma-separated list of broker ids"),
        ("1,2,1,2", "names broker(s) [1,2] twice"),
    ],
)
def test_bad_broker_list(text: str, message: str) -> None:
    with pytest.raises(ReassignCommandError) as info:
        parse_broker_list(text)
    assert message in str(info.value)


# -- output -------------------------------------------------------------------------------


def test_reassignment_json_is_kafkas_with_any_log_dirs_sorted() -> None:
    text = render_reassignment({T1: (2,), U0: (1, 3), T0: (3, 1)})
    assert text == (
        '{"version":1,"partitions":['
        '{"topic":"t","partition":0,"replicas":[3,1],"log_dirs":["any","any"]},'
        '{"topic":"t","partition":1,"replicas":[2],"log_dirs":["any"]},'
        '{"topic":"u","partition":0,"replicas":[1,3],"log_dirs":["any","any"]}]}'
    )
    assert parse_reassignment(text) == (
        PartitionReassignment(T0, (3, 1)),
        PartitionReassignment(T1, (2,)),
        PartitionReassignment(U0, (1, 3)),
    )


def test_proposal_output() -> None:
    assert render_proposal({T0: (1, 2)}, {T0: (2, 3)}).splitlines() == [
        "Current partition replica assignment",
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],'
        '"log_dirs":["any","any"]}]}',
        "",
        "Proposed partition reassignment configuration",
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,3],'
        '"log_dirs":["any","any"]}]}',
    ]


def test_started_output() -> None:
    assert render_started({T1: (2,), T0: (1,)}).splitlines() == [
        "Current partition replica assignment",
        "",
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1],'
        '"log_dirs":["any"]},{"topic":"t","partition":1,"replicas":[2],"log_dirs":["any"]}]}',
        "",
        "To roll back, keep this JSON and pass it to `testbed reassign execute "
        "--reassignment-json-file`.",
        "Started the reassignment of partitions t-0,t-1.",
    ]
