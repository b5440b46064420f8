"""Running the `testbed` command line in-process for tests (the test's own thread), and
registering stand-in brokers so that its commands can place replicas without broker
processes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pytest
from kazoo.client import KazooClient

from domain import EndPoint
from testbed.__main__ import main
from zkdata.client import KafkaZkClient
from zkdata.model import BrokerInfo


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run `testbed` with `argv`; returns its exit code (argparse's too), stdout, stderr."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def register_brokers(
    zk_client: KazooClient,
    broker_ids: Iterable[int] = (1, 2, 3),
    racks: Mapping[int, str] | None = None,
) -> KafkaZkClient:
    """Kafka's persistent paths, and `broker_ids` registered by `zk_client`'s session
    (endpoint 127.0.0.1:9000+id; nothing listens there), each on its rack in `racks` if
    it has one there."""
    zk = KafkaZkClient(zk_client)
    zk.create_persistent_paths()
    for broker_id in broker_ids:
        endpoints = (EndPoint("127.0.0.1", 9000 + broker_id),)
        rack = (racks or {}).get(broker_id)
        zk.register_broker(BrokerInfo(broker_id, endpoints, rack=rack))
    return zk
