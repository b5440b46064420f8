"""A broker starting while `/brokers/ids/N` belongs to another ZooKeeper session, on the
real ensemble with broker processes. Kafka 2.8 (`KafkaZkClient.registerBroker`) accepts a
node its own session owns and otherwise fails: the broker exits. The testbed does the
same under its default, `kafka`, profile; the `fast` profile, which the tests and the
chaos runs use, retries until the other session's node is gone (a previous process
killed moments ago), within `--registration-stale-wait-ms`."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kazoo.client import KazooClient

from domain import EndPoint
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from harness.zk_ensemble import open_client
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.model import BrokerInfo

pytestmark = pytest.mark.integration

Start = Callable[..., BrokerProcess]
REFUSED = "is registered by another session"
RETRYING = "retrying for up to"


def owner(zk_client: KazooClient, broker_id: int) -> tuple[int, int] | None:
    """(session id, czxid) of `/brokers/ids/<broker_id>`, None when absent."""
    found = zk_client.exists(paths.broker_id_child(str(broker_id)))
    return None if found is None else (found.ephemeralOwner, found.czxid)


def log_has(proc: BrokerProcess, text: str) -> bool:
    return text in proc.log_path.read_text(errors="replace") if proc.log_path.exists() else False


def test_a_broker_whose_id_another_session_holds_exits_at_once_by_default(
    brokers: Start, zk_client: KazooClient, zk_connect: str
) -> None:
    """Setup: another live session registers broker id 1.
    Steps: start broker 1 with the `kafka` profile (Kafka's behaviour).
    Validate: it exits with status 1 saying the id is held by another session, without
    retrying, well before the `fast` profile's 17 s wait; the other session's node is
    untouched."""
    with open_client(zk_connect) as holder:
        KafkaZkClient(holder).register_broker(BrokerInfo(1, (EndPoint("127.0.0.1", 9001),)))
        held = owner(zk_client, 1)
        assert held is not None
        assert held[0] == holder.client_id[0]
        proc = brokers(1, 3000, extra_args=("--profile", "kafka"))
        wait_until(
            lambda: not proc.is_running(), 15, lambda: "broker 1 kept running\n" + proc.log_tail()
        )
        assert proc.returncode() == 1, proc.log_tail()
        assert log_has(proc, REFUSED), proc.log_tail()
        assert not log_has(proc, RETRYING), proc.log_tail()
        assert owner(zk_client, 1) == held


def test_with_the_fast_profile_a_broker_outwaits_a_stale_registration(
    brokers: Start, zk_client: KazooClient, zk_connect: str
) -> None:
    """Setup: another live session registers broker id 1.
    Steps: start broker 1 (the harness gives it the `fast` profile); once it says it is
    retrying, close the other session.
    Validate: while the other session lives, broker 1 runs without registering; once the
    node is gone it registers under its own session and serves."""
    with open_client(zk_connect) as holder:
        KafkaZkClient(holder).register_broker(BrokerInfo(1, (EndPoint("127.0.0.1", 9001),)))
        held = owner(zk_client, 1)
        proc = brokers(1, 3000)
        wait_until(
            lambda: log_has(proc, RETRYING) or not proc.is_running(),
            20,
            lambda: "broker 1 never found the stale registration\n" + proc.log_tail(),
        )
        assert proc.is_running(), proc.log_tail()
        assert owner(zk_client, 1) == held
        assert proc.port() is None  # the health file is written once registered
    registered = wait_until(
        lambda: proc.port() is not None and owner(zk_client, 1),
        20,
        lambda: "broker 1 did not register after the other session closed\n" + proc.log_tail(),
    )
    assert held is not None
    assert registered[0] != held[0]
    assert registered[1] > held[1]
    assert proc.is_running()


def test_a_broker_restarted_at_once_exits_under_kafkas_defaults_and_waits_under_fast(
    brokers: Start, zk_client: KazooClient
) -> None:
    """Setup: broker 1 with a 10 s session, registered.
    Steps: kill -9 it and start it again at once with the `kafka` profile; then start it
    once more with the `fast` profile.
    Validate: the first restart finds its dead predecessor's node (the session has not
    expired) and exits with status 1, as Kafka's broker does; the second waits for the
    node to expire and registers with a newer broker epoch."""
    proc = brokers(1, 10_000)
    first = wait_until(
        lambda: proc.port() is not None and owner(zk_client, 1),
        20,
        lambda: "broker 1 did not register\n" + proc.log_tail(),
    )
    proc.kill()
    proc.start("--profile", "kafka")
    wait_until(
        lambda: not proc.is_running(), 15, lambda: "the restart kept running\n" + proc.log_tail()
    )
    assert proc.returncode() == 1, proc.log_tail()
    assert owner(zk_client, 1) == first  # still the dead process's session
    proc.start("--profile", "fast")
    again = wait_until(
        lambda: proc.port() is not None and owner(zk_client, 1) != first and owner(zk_client, 1),
        30,
        lambda: "the fast restart did not register\n" + proc.log_tail(),
    )
    assert again[1] > first[1]
    assert proc.is_running()
