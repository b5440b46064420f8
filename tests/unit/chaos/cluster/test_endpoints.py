"""Broker endpoints read from docker inspections: published ports, the advertised-address
map, the event directory and the TLS directory on the host, the session timeout, the bug
switches."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chaos.cluster.endpoints import (
    advertised_map,
    broker_addresses,
    bug_switches,
    event_dir,
    event_dir_of,
    metrics_urls,
    published,
    session_timeout_ms,
    switches_on,
    tls_dir,
    tls_dir_of,
)


def attrs(broker: int, grpc: int | None, metrics: int) -> dict[str, Any]:
    ports: dict[str, Any] = {"9404/tcp": [{"HostIp": "127.0.0.1", "HostPort": str(metrics)}]}
    ports["9092/tcp"] = None if grpc is None else [{"HostIp": "0.0.0.0", "HostPort": str(grpc)}]
    return {
        "Config": {
            "Hostname": f"broker{broker}",
            "Env": [f"BROKER_ID={broker}", "RUN_DIR=/runs/r1", "ZK_SESSION_TIMEOUT_MS=6000"],
        },
        "NetworkSettings": {"Ports": ports},
        "Mounts": [{"Source": "/repo/runs", "Destination": "/runs"}],
    }


class Cluster:
    def __init__(self) -> None:
        self._attrs = {"broker1": attrs(1, 9091, 9401), "broker2": attrs(2, None, 9402)}

    def brokers(self) -> dict[int, str]:
        return {1: "broker1", 2: "broker2"}

    def inspect(self, service: str) -> Mapping[str, Any]:
        return self._attrs[service]


def test_published_ports_are_loopback_addresses() -> None:
    assert published(attrs(1, 9091, 9401), "9092/tcp") == "127.0.0.1:9091"
    assert published(attrs(1, None, 9401), "9092/tcp") is None


def test_endpoints_of_the_brokers_that_publish() -> None:
    cluster = Cluster()
    assert broker_addresses(cluster) == {1: "127.0.0.1:9091"}
    assert advertised_map(cluster) == {"broker1:9092": "127.0.0.1:9091"}
    assert metrics_urls(cluster) == {
        "broker1": "http://127.0.0.1:9401/metrics",
        "broker2": "http://127.0.0.1:9402/metrics",
    }
    assert session_timeout_ms(cluster) == 6000


def test_the_event_directory_is_the_run_dir_under_its_mount() -> None:
    assert event_dir(Cluster()) == Path("/repo/runs/r1/events")
    unmounted = attrs(1, 9091, 9401)
    unmounted["Mounts"] = []
    assert event_dir_of(unmounted) is None


def test_the_tls_directory_is_where_the_mounted_ca_certificate_comes_from() -> None:
    assert tls_dir(Cluster()) is None  # plaintext brokers
    broker = attrs(1, 9091, 9401)
    broker["Config"]["Env"].append("TLS_DIR=/etc/testbed/tls")
    assert tls_dir_of(broker) is None  # nothing mounted there
    file_mount = {"Source": "/repo/.secrets/tls/ca.crt", "Destination": "/etc/testbed/tls/ca.crt"}
    assert tls_dir_of({**broker, "Mounts": [file_mount]}) == Path("/repo/.secrets/tls")
    dir_mount = {"Source": "/srv/tls", "Destination": "/etc/testbed/tls"}
    assert tls_dir_of({**broker, "Mounts": [dir_mount]}) == Path("/srv/tls")
    broker["Config"]["Env"][-1] = "TLS_DIR=off"
    assert tls_dir_of({**broker, "Mounts": [dir_mount]}) is None


def test_bug_switches_are_read_from_each_brokers_environment() -> None:
    cluster = Cluster()
    cluster.inspect("broker1")["Config"]["Env"].append("BUG_SWITCHES=kip-101, Kafka-1188")
    cluster.inspect("broker2")["Config"]["Env"].append("BUG_SWITCHES=")
    found = bug_switches(cluster)
    assert found == {"broker1": ("kafka-1188", "kip-101"), "broker2": ()}
    assert switches_on(found) == ("kafka-1188", "kip-101")
    assert switches_on({"broker1": ()}) == ()
