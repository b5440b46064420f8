"""Bootstrap from ZooKeeper: the addresses brokers registered under `/brokers/ids`, and the
address of the broker holding `/controller`, as a client outside the brokers finds them.
Blocks the calling thread on ZooKeeper reads."""

from __future__ import annotations

from collections.abc import Mapping

from client.addresses import endpoint_address
from zkdata.client import KafkaZkClient


def registered_addresses(
    zk: KafkaZkClient, address_map: Mapping[str, str] | None = None
) -> dict[int, str]:
    """Every registered broker's first endpoint as `host:port`, rewritten by
    `address_map` (advertised -> reachable) when it has an entry."""
    mapping = address_map or {}
    out: dict[int, str] = {}
    for broker_id, broker in sorted(zk.get_all_brokers().brokers.items()):
        advertised = endpoint_address(broker.info.endpoint)
        out[broker_id] = mapping.get(advertised, advertised)
    return out


def controller_address_from_zookeeper(
    zk: KafkaZkClient, address_map: Mapping[str, str] | None = None
) -> str | None:
    """The registered address of the controller, or None when none is elected or its
    registration is gone."""
    controller_id = zk.get_controller_id()
    if controller_id is None:
        return None
    broker = zk.get_broker(controller_id)
    if broker is None:
        return None
    advertised = endpoint_address(broker.info.endpoint)
    return (address_map or {}).get(advertised, advertised)
