"""Where the host reaches a compose project's brokers, read from docker's inspection of
each container (`ClusterHandle.inspect`, which checks the project label): the published
loopback port of each broker's gRPC and Prometheus ports, the map from the address a
broker advertises (`<hostname>:9092`) to the published one, the cluster's event-log
directory on the host, each broker's data directory in its container, the host directory
of the TLS material the brokers were given (`TLS_DIR`; none: a plaintext cluster), the
brokers' timing profile and effective timing settings (`TESTBED_PROFILE` and the
settings' variables, `domain.profiles`), among them the ZooKeeper session timeout, and the
historical bug switches they run with (`BUG_SWITCHES`, docs/bugs.md).

Pure over the inspection (`published`, `env_of`, `host_path`, `event_dir_of`,
`data_dir_of`, `tls_dir_of`, `settings_of`); the rest reads the handle on the caller's
thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from domain.flush import FLUSH_INTERVAL_FLAG, FLUSH_INTERVAL_SETTING, flush_interval
from domain.profiles import ProfileError, effective, env_name
from domain.protocols import DEFAULT_INTER_BROKER_PROTOCOL
from security.tls_files import CA, TlsFiles

GRPC_PORT = "9092/tcp"
#: The CA certificate's name in a TLS directory (`security.tls_files`).
CA_CERT = TlsFiles(Path()).cert(CA).name
METRICS_PORT = "9404/tcp"
#: The session timeout's name among `settings_of`'s values.
SESSION_TIMEOUT = "zk-session-timeout-ms"


class Inspectable(Protocol):
    """What the endpoints read (`chaos.cluster.handle.ClusterHandle`)."""

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


def host_path(attrs: Mapping[str, Any], path: str) -> Path | None:
    """Where the container's `path` lives on the host: under the source of the mount that
    holds it, or None when no mount does."""
    for mount in attrs.get("Mounts") or []:
        destination = str(mount.get("Destination", "")).rstrip("/")
        if destination and (path == destination or path.startswith(destination + "/")):
            return Path(mount["Source"]) / path[len(destination) :].lstrip("/")
    return None


def event_dir_of(attrs: Mapping[str, Any]) -> Path | None:
    """The host directory the broker writes its event log to: its `RUN_DIR` on the host,
    plus `events/`."""
    run_dir = env_of(attrs).get("RUN_DIR")
    found = host_path(attrs, run_dir) if run_dir else None
    return found / "events" if found is not None else None


def data_dir_of(attrs: Mapping[str, Any], broker_id: int) -> str:
    """The broker's data directory inside its container, as the broker resolves it
    (`broker_node.config`): its `DATA_DIR`, else `<RUN_DIR>/data/broker<id>`."""
    env = env_of(attrs)
    if env.get("DATA_DIR"):
        return env["DATA_DIR"]
    return f"{env.get('RUN_DIR', '.').rstrip('/')}/data/broker{broker_id}"


def tls_dir_of(attrs: Mapping[str, Any]) -> Path | None:
    """The host directory of the broker's TLS material: where the CA certificate in its
    `TLS_DIR` comes from (the directory or the file may be mounted), or None when the
    broker speaks plaintext."""
    tls_dir = env_of(attrs).get("TLS_DIR", "").strip()
    if tls_dir.lower() in ("", "off"):
        return None
    ca = host_path(attrs, f"{tls_dir.rstrip('/')}/{CA_CERT}")
    return ca.parent if ca is not None else None


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


def tls_dir(cluster: Inspectable) -> Path | None:
    """The host directory of the brokers' TLS material (the first broker that has one);
    None: the project's brokers speak plaintext."""
    for service in sorted(cluster.brokers().values()):
        found = tls_dir_of(cluster.inspect(service))
        if found is not None:
            return found
    return None


def settings_of(attrs: Mapping[str, Any]) -> tuple[str, dict[str, int | None]] | None:
    """The broker's timing profile and the effective value of each setting a profile
    chooses (`domain.profiles`: `zk-session-timeout-ms` -> 6000, ...), resolved from its
    environment as the broker resolves it, and its flush policy (`domain.flush`); None
    when the environment names no profile the testbed knows or holds a value that is not
    a number."""
    env = env_of(attrs)
    try:
        profile, chosen = effective(env)
        values = {
            flag.lstrip("-"): None if value is None else int(value)
            for flag, value in chosen.items()
        }
        values[FLUSH_INTERVAL_SETTING] = flush_interval(env.get(env_name(FLUSH_INTERVAL_FLAG)))
    except (ProfileError, ValueError):
        return None
    return profile, values


def broker_settings(cluster: Inspectable) -> tuple[str, dict[str, int | None]] | None:
    """`settings_of` the first broker, or None when there is none or it has none."""
    services = sorted(cluster.brokers().values())
    return settings_of(cluster.inspect(services[0])) if services else None


def session_timeout_ms(cluster: Inspectable) -> int | None:
    """The brokers' effective ZooKeeper session timeout (the first broker's), or None."""
    found = broker_settings(cluster)
    return None if found is None else found[1].get(SESSION_TIMEOUT)


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


def inter_broker_protocols(cluster: Inspectable) -> dict[str, str]:
    """Service -> the inter-broker protocol its `INTER_BROKER_PROTOCOL` names
    (`domain.protocols`; the broker's default when unset), for every broker."""
    out = {}
    for service in sorted(cluster.brokers().values()):
        raw = env_of(cluster.inspect(service)).get("INTER_BROKER_PROTOCOL", "").strip()
        out[service] = raw or DEFAULT_INTER_BROKER_PROTOCOL
    return out
