"""Where the host reaches a compose project's brokers, read from docker's inspection of
each container (`ClusterHandle.inspect`, which checks the project label): the published
loopback port of each broker's gRPC and Prometheus ports, the map from the address a
broker advertises (`<hostname>:9092`) to the published one, the cluster's event-log
directory on the host, the brokers' ZooKeeper session timeout and the historical bug
switches they run with (`BUG_SWITCHES`, docs/bugs.md).

Pure over the inspection (`published`, `env_of`, `event_dir_of`); the rest reads the
handle on the caller's thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

GRPC_PORT = "9092/tcp"
METRICS_PORT = "9404/tcp"


class Inspectable(Protocol):
    """What the endpoints read (`chaos.cluster.ClusterHandle`)."""

    def brokers(self) -> dict[int, str]:
        """Broker id -> service."""
        ...

    def inspect(self, service: str) -> Mapping[str, Any]:
        """The container's docker inspection."""
        ...


def published(attrs: Mapping[str, Any], port: str) -> str | None:
    """`127.0.0.1:<host port>` where `port` (e.g. `9092/tcp`) is published, or None."""
    ports: Mapping[str, Any] = attrs.get("NetworkSettings", {}).get("Ports") or {}
    for binding in ports.get(port) or []:
        host = binding.get("HostIp") or "127.0.0.1"
        host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
        return f"{host}:{int(binding['HostPort'])}"
    return None


def env_of(attrs: Mapping[str, Any]) -> dict[str, str]:
    """The container's environment as a dict."""
    env = attrs.get("Config", {}).get("Env") or []
    return dict(entry.partition("=")[::2] for entry in env)


def event_dir_of(attrs: Mapping[str, Any]) -> Path | None:
    """The host directory the broker writes its event log to: its `RUN_DIR` under the
    host source of the mount that holds it, plus `events/`."""
    run_dir = env_of(attrs).get("RUN_DIR")
    if not run_dir:
        return None
    for mount in attrs.get("Mounts") or []:
        destination = str(mount.get("Destination", "")).rstrip("/")
        if destination and (run_dir == destination or run_dir.startswith(destination + "/")):
            relative = run_dir[len(destination) :].lstrip("/")
            return Path(mount["Source"]) / relative / "events"
    return None


def broker_addresses(cluster: Inspectable) -> dict[int, str]:
    """Broker id -> published gRPC address, for the brokers that publish one."""
    out = {}
    for broker, service in sorted(cluster.brokers().items()):
        address = published(cluster.inspect(service), GRPC_PORT)
        if address is not None:
            out[broker] = address
    return out


def advertised_map(cluster: Inspectable) -> dict[str, str]:
    """`<hostname>:9092` (what a broker advertises) -> its published address."""
    out = {}
    for service in cluster.brokers().values():
        attrs = cluster.inspect(service)
        address = published(attrs, GRPC_PORT)
        hostname = attrs.get("Config", {}).get("Hostname")
        if address is not None and hostname:
            out[f"{hostname}:{GRPC_PORT.split('/')[0]}"] = address
    return out


def metrics_urls(cluster: Inspectable) -> dict[str, str]:
    """Service -> `http://<published metrics address>/metrics` of every broker publishing."""
    out = {}
    for service in cluster.brokers().values():
        address = published(cluster.inspect(service), METRICS_PORT)
        if address is not None:
            out[service] = f"http://{address}/metrics"
    return out


def event_dir(cluster: Inspectable) -> Path | None:
    """The host directory of the brokers' event logs (the first broker that has one)."""
    for service in sorted(cluster.brokers().values()):
        found = event_dir_of(cluster.inspect(service))
        if found is not None:
            return found
    return None


def session_timeout_ms(cluster: Inspectable) -> int | None:
    """The brokers' `ZK_SESSION_TIMEOUT_MS` (the first broker's), or None."""
    for service in sorted(cluster.brokers().values()):
        value = env_of(cluster.inspect(service)).get("ZK_SESSION_TIMEOUT_MS", "")
        if value.isdigit():
            return int(value)
    return None


def bug_switches(cluster: Inspectable) -> dict[str, tuple[str, ...]]:
    """Service -> the bug switches its `BUG_SWITCHES` turns on (sorted names, lower case;
    empty when none), for every broker."""
    out = {}
    for service in sorted(cluster.brokers().values()):
        raw = env_of(cluster.inspect(service)).get("BUG_SWITCHES", "")
        out[service] = tuple(sorted({p.strip().lower() for p in raw.split(",") if p.strip()}))
    return out


def switches_on(by_broker: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    """Every switch any broker runs with, sorted."""
    return tuple(sorted({name for names in by_broker.values() for name in names}))
