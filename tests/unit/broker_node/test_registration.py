"""`BrokerRegistration` registers the rack it was given, which the broker znode carries
under `rack` as Kafka 2.8 writes it; a registration another session holds fails at once
without a wait (Kafka's behaviour) and is retried until it goes with one. Bug switch
`kafka-7165`: a re-registration after a session expiry gives up at the first existing
node, its own session's too."""

from __future__ import annotations

import json
from typing import cast

import pytest

from broker_node.registration import BrokerRegistration
from bugs import NO_BUGS, BugSwitches
from bugs.catalog import REGISTRATION_GIVES_UP
from eventlog.testing import RecordingEventLog
from zkdata.client import KafkaZkClient
from zkdata.errors import BrokerIdInUseError
from zkdata.model import BrokerInfo
from zkdata.znodes import BrokerIdZNode


class _RecordingZk:
    """Keeps the registrations it is asked to write."""

    session_id = 0x1234

    def __init__(self) -> None:
        self.registered: list[BrokerInfo] = []

    def register_broker(self, info: BrokerInfo, check_owner: bool = True) -> int:
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


class _HeldZk:
    """Another session holds the id for the first `held` attempts."""

    session_id = 0x1234

    def __init__(self, held: int) -> None:
        self.held = held
        self.attempts = 0

    def register_broker(self, info: BrokerInfo, check_owner: bool = True) -> int:
        self.attempts += 1
        if self.attempts <= self.held:
            raise BrokerIdInUseError(f"broker id {info.id} is registered by another session")
        return 77


def test_without_a_wait_a_registration_held_by_another_session_fails_at_once() -> None:
    """Kafka's behaviour (the `kafka` profile): one attempt, then the error."""
    zk = _HeldZk(held=1)
    registration = BrokerRegistration(
        cast(KafkaZkClient, zk), 3, "broker3", 9092, RecordingEventLog(), 0.0
    )
    with pytest.raises(BrokerIdInUseError, match="another session"):
        registration.register()
    assert zk.attempts == 1
    assert registration.epoch == -1


def test_with_a_wait_the_registration_is_retried_until_the_stale_node_goes() -> None:
    zk = _HeldZk(held=2)
    events = RecordingEventLog()
    registration = BrokerRegistration(cast(KafkaZkClient, zk), 3, "broker3", 9092, events, 30.0)
    assert registration.register() == 77
    assert (zk.attempts, registration.epoch) == (3, 77)


class _LostReplyZk:
    """Registers epoch 10 at first; the re-registration's create is applied by ZooKeeper
    but its answer is lost, so the retry meets the node this very session created
    (epoch 20): the client owns it, and says so when asked (`check_owner`)."""

    session_id = 0x1234

    def __init__(self) -> None:
        self.attempts = 0

    def register_broker(self, info: BrokerInfo, check_owner: bool = True) -> int:
        self.attempts += 1
        if self.attempts == 1:
            return 10
        if not check_owner:
            raise BrokerIdInUseError(f"/brokers/ids/{info.id} already exists")
        return 20


def _reregistered(switches: BugSwitches) -> tuple[BrokerRegistration, _LostReplyZk]:
    zk = _LostReplyZk()
    registration = BrokerRegistration(
        cast(KafkaZkClient, zk),
        3,
        "broker3",
        9092,
        RecordingEventLog(),
        30.0,
        bug_switches=switches,
    )
    assert registration.register() == 10
    return registration, zk


def test_a_reregistration_that_meets_its_own_node_succeeds_by_default() -> None:
    registration, zk = _reregistered(NO_BUGS)
    assert registration.register() == 20
    assert (zk.attempts, registration.epoch) == (2, 20)


def test_kafka_7165_a_reregistration_gives_up_at_an_existing_node() -> None:
    registration, zk = _reregistered(BugSwitches(frozenset({REGISTRATION_GIVES_UP})))
    with pytest.raises(BrokerIdInUseError, match="already exists"):
        registration.register()
    assert zk.attempts == 2  # no retry, although the wait would allow 30 s
    assert registration.epoch == 10  # still the expired session's


def test_kafka_7165_leaves_the_first_registration_alone() -> None:
    zk = _HeldZk(held=1)
    registration = BrokerRegistration(
        cast(KafkaZkClient, zk),
        3,
        "broker3",
        9092,
        RecordingEventLog(),
        30.0,
        bug_switches=BugSwitches(frozenset({REGISTRATION_GIVES_UP})),
    )
    assert registration.register() == 77
    assert zk.attempts == 2
