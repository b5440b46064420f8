"""`/log_dir_event_notification/log_dir_event_<seq>` against Kafka 2.x's path and bytes."""

from __future__ import annotations

import pytest

from zkdata import paths
from zkdata.admin_znodes import LogDirEventNotificationSequenceZNode as Codec
from zkdata.errors import ZnodeFormatError


def test_path_and_prefix_are_kafkas() -> None:
    assert Codec.path_prefix() == "/log_dir_event_notification/log_dir_event_"
    assert Codec.path("log_dir_event_0000000007") == (
        "/log_dir_event_notification/log_dir_event_0000000007"
    )


def test_the_parent_is_created_at_start_up_as_kafka_creates_it() -> None:
    assert paths.LOG_DIR_EVENT_NOTIFICATION in paths.PERSISTENT_PATHS


@pytest.mark.parametrize(
    ("broker", "data"),
    [
        (0, b'{"version":1,"broker":0,"event":1}'),
        (3, b'{"version":1,"broker":3,"event":1}'),
        (2147483647, b'{"version":1,"broker":2147483647,"event":1}'),
    ],
)
def test_encodes_kafkas_bytes_and_reads_them_back(broker: int, data: bytes) -> None:
    assert Codec.encode(broker) == data
    assert Codec.decode(data) == broker


@pytest.mark.parametrize(
    ("data", "broker"),
    [
        pytest.param(b'{"broker":4}', 4, id="only-broker-as-kafka-reads"),
        pytest.param(b'{"version":2,"broker":5,"event":9}', 5, id="other-version-and-event"),
    ],
)
def test_decodes_the_broker_whatever_else_the_node_says(data: bytes, broker: int) -> None:
    assert Codec.decode(data) == broker


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(None, id="no-data"),
        pytest.param(b"", id="empty"),
        pytest.param(b'{"version":1,"event":1}', id="no-broker"),
        pytest.param(b'{"version":1,"broker":"3","event":1}', id="broker-as-string"),
        pytest.param(b'{"version":1,"broker":-1,"event":1}', id="negative-broker"),
        pytest.param(b"[1]", id="not-an-object"),
    ],
)
def test_malformed_notifications_raise_znode_format_error(data: bytes | None) -> None:
    with pytest.raises(ZnodeFormatError):
        Codec.decode(data)
