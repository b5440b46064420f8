"""`client.ClusterMetadata` against an in-process cluster (`client.testing.FakeBrokers`):
bootstrap, address mapping, leader lookup, the refresh order, one connection per address,
and address parsing."""

from __future__ import annotations

import pytest

from client import (
    ApiLike,
    Client,
    ClusterUnavailable,
    NoRoute,
    parse_address,
    parse_address_map,
    parse_addresses,
)
from client.testing import ADDRESS_MAP, REACHABLE, FakeBrokers, three_brokers
from domain import TopicPartition


@pytest.fixture
def brokers() -> FakeBrokers:
    """Three brokers reached through an address map; broker 1 leads both partitions."""
    return three_brokers()


@pytest.fixture
def cluster(brokers: FakeBrokers) -> Client:
    """A client bootstrapped from broker 2."""
    return Client([REACHABLE[2]], topics=("t",), address_map=ADDRESS_MAP, connect=brokers.connect)


# -- metadata -----------------------------------------------------------------------------


def test_cluster_maps_advertised_addresses_and_finds_leaders(
    cluster: Client, brokers: FakeBrokers
) -> None:
    cluster.refresh()
    assert cluster.leader_of(TopicPartition("t", 0)) == 1
    assert cluster.address_of(1) == "127.0.0.1:9091"
    assert cluster.address_of(3) == "127.0.0.1:9093"
    assert cluster.partitions_of("t") == (0, 1)
    assert cluster.leader_of(TopicPartition("t", 9)) is None


def test_cluster_refreshes_on_first_use_and_caches_one_client_per_address(
    brokers: FakeBrokers,
) -> None:
    made: list[str] = []

    def connect(address: str) -> ApiLike:
        made.append(address)
        return brokers.connect(address)

    cluster = Client([REACHABLE[2]], address_map=ADDRESS_MAP, connect=connect)
    assert cluster.leader_of(TopicPartition("t", 1)) == 1
    cluster.refresh()
    cluster.api(REACHABLE[2])
    assert made == [REACHABLE[2]]


def test_cluster_bootstraps_from_any_reachable_broker(brokers: FakeBrokers) -> None:
    brokers.down.add(1)
    cluster = Client(
        ["127.0.0.1:9999", REACHABLE[1], REACHABLE[3]],
        address_map=ADDRESS_MAP,
        connect=brokers.connect,
    )
    response = cluster.refresh()
    assert {b.id for b in response.brokers} == {2, 3}
    assert ("127.0.0.1:9093", "metadata") in brokers.calls


def test_a_broker_that_failed_is_asked_last_and_each_refresh_starts_further_on(
    brokers: FakeBrokers,
) -> None:
    cluster = Client(list(REACHABLE.values()), address_map=ADDRESS_MAP, connect=brokers.connect)
    brokers.down.add(1)
    for _ in range(3):
        cluster.refresh()
    asked = [a for a, method in brokers.calls if method == "metadata"]
    assert asked == [REACHABLE[1], REACHABLE[2], REACHABLE[3], REACHABLE[2]]


def test_cluster_without_a_reachable_broker_says_so(brokers: FakeBrokers) -> None:
    brokers.down.update({1, 2, 3})
    cluster = Client([REACHABLE[1], REACHABLE[2]], connect=brokers.connect)
    with pytest.raises(ClusterUnavailable, match=r"UNAVAILABLE from 127\.0\.0\.1:9091"):
        cluster.refresh()


def test_cluster_close_closes_every_client(cluster: Client) -> None:
    cluster.refresh()
    client = cluster.api(REACHABLE[2])
    cluster.close()
    assert getattr(client, "closed", False)


@pytest.mark.parametrize("text", ["broker1", "broker1:", ":9092", "b:0", "b:65536", "a b:1"])
def test_bad_addresses_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="host:port"):
        parse_address(text)


def test_address_maps_parse_and_refuse_malformed_items() -> None:
    assert parse_address_map("broker1:9092=127.0.0.1:9091, [::1]:1=h:2") == {
        "broker1:9092": "127.0.0.1:9091",
        "[::1]:1": "h:2",
    }
    with pytest.raises(ValueError, match="ADVERTISED=REACHABLE"):
        parse_address_map("broker1:9092")
    with pytest.raises(ValueError, match="host:port"):
        parse_address_map("broker1:9092=nowhere")


def test_leader_address_names_why_there_is_no_route(cluster: Client, brokers: FakeBrokers) -> None:
    assert cluster.leader_address(TopicPartition("t", 0)) == REACHABLE[1]
    with pytest.raises(NoRoute, match="UNKNOWN_TOPIC_OR_PARTITION"):
        cluster.leader_address(TopicPartition("t", 9))
    brokers.move_leader(1, -1)
    cluster.refresh()
    with pytest.raises(NoRoute, match="LEADER_NOT_AVAILABLE"):
        cluster.leader_address(TopicPartition("t", 1))


def test_a_leader_without_a_live_registration_has_no_route(brokers: FakeBrokers) -> None:
    brokers.down.add(3)
    brokers.move_leader(0, 3)
    client = Client([REACHABLE[2]], address_map=ADDRESS_MAP, connect=brokers.connect)
    with pytest.raises(NoRoute, match="leader 3 has no known address"):
        client.leader_address(TopicPartition("t", 0))


def test_broker_addresses_are_the_reachable_ones(cluster: Client) -> None:
    assert cluster.broker_addresses() == REACHABLE


def test_address_lists_parse_and_refuse_an_empty_one() -> None:
    assert parse_addresses(" a:1, b:2 ,") == ["a:1", "b:2"]
    with pytest.raises(ValueError, match="at least one"):
        parse_addresses(" , ")
