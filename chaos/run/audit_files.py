"""The replica audit of a broker whose container is stopped, read from the files it left:
the run's topic's partition logs are copied out of the container's data directory
(`endpoints.data_dir_of`, through docker's archive API, `chaos.cluster.container_files`)
into a temporary directory, and audited there by the broker's own offline tool
(`python -m broker_node.log_dir_audit`, a child process: the tools import none of the
broker), which answers what the broker's ReplicaAudit would have, without leadership.

A running, paused or restarting container is not read: its files may be half-written.
Runs on the runner's thread.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from chaos.cluster import endpoints
from chaos.cluster.container_files import extract
from chaos.errors import ChaosError, FaultError
from rpc import messages as m
from rpc.wire import replica_audit_response_from_json

#: Docker states of a container whose processes have ended, so its files are still.
STOPPED = frozenset({"created", "exited", "dead"})
#: The broker's offline audit of a data directory, run with `python -m`.
AUDIT_TOOL = "broker_node.log_dir_audit"
#: The repository root, on the tool's PYTHONPATH.
ROOT = Path(__file__).resolve().parents[2]
#: How long the tool may take over one broker's logs.
TOOL_TIMEOUT_S = 120.0


class BrokerContainers(Protocol):
    """What the audit reads of a project's containers (`ClusterHandle` is one)."""

    def brokers(self) -> dict[int, str]:
        """Broker id -> service."""
        ...

    def status(self, service: str) -> str:
        """Docker's state of the service's container."""
        ...

    def inspect(self, service: str) -> Mapping[str, Any]:
        """The container's docker inspection."""
        ...

    def copy_out(self, service: str, path: str) -> Iterator[bytes]:
        """`path` of the container as a tar stream."""
        ...


class FilesUnread(ChaosError):
    """The broker's files could not be read (not stopped, docker refused the copy, the
    tool failed); the message says why. `write_audit` names it under `unreachable`."""


def audit_from_files(cluster: BrokerContainers, broker: int, topic: str) -> m.ReplicaAuditResponse:
    """Broker `broker`'s replicas of `topic` as its stopped container's files hold them;
    `FilesUnread` when they cannot be copied out or the tool fails."""
    service = cluster.brokers().get(broker)
    if service is None:
        raise FilesUnread(f"no container of broker {broker}")
    try:
        if cluster.status(service) not in STOPPED:
            raise FilesUnread(f"{service} is {cluster.status(service)}, not stopped")
        data_dir = endpoints.data_dir_of(cluster.inspect(service), broker)
        with tempfile.TemporaryDirectory(prefix="testbed-audit-") as tmp:
            copy = Path(tmp)
            owned = re.compile(rf"{re.escape(topic)}-\d+")
            if not _extract(cluster, service, data_dir, copy, owned):
                return m.ReplicaAuditResponse(broker)
            return _run_tool(copy, broker, topic)
    except FaultError as exc:
        raise FilesUnread(str(exc)) from exc


def _extract(
    cluster: BrokerContainers, service: str, data_dir: str, into: Path, owned: re.Pattern[str]
) -> int:
    """Copy the log directories `owned` matches out of `data_dir`; members written."""

    def keep(name: PurePosixPath) -> bool:
        return owned.fullmatch(name.parts[0]) is not None

    try:
        return extract(cluster.copy_out(service, data_dir), into, keep)
    except (tarfile.TarError, OSError) as exc:
        raise FilesUnread(f"{service}:{data_dir}: {exc}") from exc


def _run_tool(copy: Path, broker: int, topic: str) -> m.ReplicaAuditResponse:
    command = [
        sys.executable, "-m", AUDIT_TOOL, str(copy), "--broker", str(broker), "--topic", topic,
    ]  # fmt: skip
    try:
        done = subprocess.run(
            command,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=TOOL_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FilesUnread(f"{AUDIT_TOOL}: {exc}") from exc
    if done.returncode != 0:
        raise FilesUnread(f"{AUDIT_TOOL} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    try:
        return replica_audit_response_from_json(done.stdout)
    except ValueError as exc:
        raise FilesUnread(f"{AUDIT_TOOL}: {exc}") from exc
