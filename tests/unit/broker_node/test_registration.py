"""`BrokerRegistration` registers the rack it was given, which the broker znode carries
under `rack` as Kafka 2.8 writes it."""

from __future__ import annotations

import json
from typing import cast

import pytest

from broker_node.registration import BrokerRegistration
from eventlog.testing import RecordingEventLog
from zkdata.client import KafkaZkClient
from zkdata.model import BrokerInfo
from zkdata.znodes import BrokerIdZNode


class _RecordingZk:
    """Keeps the registrations it is asked to write."""

    session_id = 0x1234

    def __init__(self) -> None:
        self.registered: list[BrokerInfo] = []

    def register_broker(self, info: BrokerInfo) -> int:
        self.registered.append(info)
        return 42


@pytest.mark.parametrize("rack", ["eu-1a", None])
def test_registration_writes_the_configured_rack(rack: str | None) -> None:
    zk = _RecordingZk()
    registration = BrokerRegistration(
        cast(KafkaZkClient, zk), 3, "broker3", 9092, RecordingEventLog(), 1.0, rack=rack
    )
    assert registration.register() == 42
    [info] = zk.registered
    assert info.rack == rack
    body = json.loads(BrokerIdZNode.encode(info))
    assert body.get("rack") == rack
    assert BrokerIdZNode.decode(3, BrokerIdZNode.encode(info)).rack == rack
