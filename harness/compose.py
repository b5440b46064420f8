"""A compose project of the testbed, reached from the host (docker and chaos tiers):
`started_project` brings the repository's docker-compose.yml up under a private project
name on Docker-picked loopback ports (testcontainers' `DockerCompose`; its reaper cannot
be pulled here, so it is off and the project is removed with `down --volumes` on exit),
waits for three registered brokers and a controller, and yields a `ComposeCluster`.
The project is secured as the default one is: its brokers and `ComposeCluster.zk()`
authenticate with the repository's `.secrets/zk-digest`, its brokers speak mutual TLS with
the repository's `.secrets/tls`, and `ComposeCluster.tls` is the client identity for calls
from the host (`make setup` creates both). Its brokers can be recreated with other
settings (`recreate_brokers`, the bug hunt's builds). Caller's thread.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from docker.client import DockerClient
from docker.models.containers import Container
from kazoo.client import KazooClient
from testcontainers.compose import DockerCompose

from domain.profiles import FAST, PROFILE_ENV
from harness.disk_layers import (
    COMPOSE_ENV,
    DiskLayerError,
    layer_root,
    start_layers,
    stop_layers,
)
from harness.waiting import wait_until
from security.secret_files import SecretFileError
from security.tls_files import CLIENT, TlsIdentity, TlsMaterialError, load_identity
from security.zk_credentials import FILE_NAME, ZkDigestCredentials, kazoo_options
from security.zk_credentials import load as load_zk_credentials
from security.zk_tls import ZkTls
from zkdata.client import KafkaZkClient


def images() -> tuple[str, ...]:
    """The images a compose project runs: the ZooKeeper and broker ones under
    `TESTBED_TAG` (default latest), as docker-compose.yml names them."""
    tag = os.environ.get("TESTBED_TAG") or "latest"
    return ("testbed-base:latest", f"testbed-zookeeper:{tag}", f"testbed-broker:{tag}")


BROKER_SERVICES = ("broker1", "broker2", "broker3")
#: The compose file that puts the brokers' log directories behind the disk layers.
DISK_COMPOSE_FILE = "docker-compose.disk.yml"


def brokers_up_command(compose_command: Sequence[str]) -> list[str]:
    """`docker compose up` of the brokers alone, each recreated even when its
    configuration did not change (`--force-recreate`; compose would keep it running)."""
    return [
        *compose_command,
        *("up", "--detach", "--wait", "--no-deps", "--force-recreate"),
        *BROKER_SERVICES,
    ]


class ComposeStartError(Exception):
    """The project did not come up; the message holds compose's output and each
    container's state and log tail."""


@dataclass
class ComposeCluster:
    """A running compose project and ways to reach it from the host."""

    compose: DockerCompose
    project: str
    run_dir: Path
    zk_connect: str
    #: The cluster's ZooKeeper identity (what docker-compose.yml mounts into the brokers).
    zk_credentials: ZkDigestCredentials
    #: The client certificate of the project's CA, for gRPC calls from the host.
    tls: TlsIdentity | None = None
    #: The same certificate as kazoo reads it: ZooKeeper listens on TLS only.
    zk_tls: ZkTls | None = None

    def container(self, service: str) -> Container:
        """The docker SDK object of a service's container."""
        found = self.compose.get_container(service_name=service, include_all=True)
        return DockerClient.from_env().containers.get(found.ID)

    def broker_addresses(self) -> dict[str, str]:
        """Each broker's advertised address mapped to its published loopback port."""
        return {
            f"broker{i}:9092": f"127.0.0.1:{self.compose.get_service_port(f'broker{i}', 9092)}"
            for i in (1, 2, 3)
        }

    def recreate_brokers(self, env: Mapping[str, str]) -> None:
        """`docker compose up --wait` of the brokers alone with `env` added to the
        project's environment (`brokers_up_command`): every broker is recreated, its
        configuration changed or not, so that one a run left broken (alive but
        unregistered, a controller stuck) is replaced; ZooKeeper is left alone. Waits
        until they are healthy. Only inside `started_project`, whose environment names the
        project. `ComposeStartError` when they do not come up."""
        command = brokers_up_command(self.compose.docker_compose_command())
        try:
            subprocess.run(
                command,
                cwd=self.compose.context,
                env={**os.environ, **env},
                capture_output=True,
                check=True,
            )
        except subprocess.CalledProcessError as exc:
            raise ComposeStartError(_start_failure(exc, self.project)) from None

    def zk(self) -> KazooClient:
        """A started kazoo client on the published ZooKeeper ports, over TLS and
        authenticated with the cluster's credentials (caller stops it)."""
        options = kazoo_options(self.zk_credentials, self.zk_tls)
        client = KazooClient(hosts=self.zk_connect, timeout=10, **options)
        client.start(timeout=30)
        return client


def missing_images() -> list[str]:
    """The testbed images the local Docker daemon does not have."""
    client = DockerClient.from_env()
    return [image for image in images() if not client.images.list(name=image)]


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback ports that are free now (bound together, then released)."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


@contextmanager
def started_project(
    repo_root: Path,
    project: str,
    run_id: str,
    session_ms: int,
    stable_ports: bool = False,
    env: Mapping[str, str] | None = None,
    disk_layers: bool = False,
) -> Iterator[ComposeCluster]:
    """The compose cluster up and healthy under `project`, brokers on the `fast` profile
    with ZooKeeper sessions of `session_ms`, event logs in `runs/<run_id>`; removed on
    exit. `ComposeStartError` when it does not come up or the secrets are not set up,
    `TimeoutError` when it does not elect a controller.

    Ports are Docker-picked, so a container that is killed and started again is published
    on another port; with `stable_ports` they are free loopback ports picked here and
    written into the project, so a restarted (or recreated) container keeps its ports and
    a client that looked them up once still reaches it. `env` adds to the project's
    environment (`TESTBED_TAG`: the images of another build).

    With `disk_layers` each broker's log directory is a host directory behind a disk layer
    (`harness.disk_layers`; plain directories where FUSE cannot be had), mounted before
    the containers start and unmounted, with the data, once they are gone."""
    try:
        credentials = load_zk_credentials(repo_root / ".secrets" / FILE_NAME)
        client = load_identity(repo_root / ".secrets" / "tls", CLIENT)
        zk_tls = ZkTls(repo_root / ".secrets" / "tls", CLIENT).check()
    except (SecretFileError, TlsMaterialError) as exc:
        raise ComposeStartError(f"{exc}; run `make setup`") from None
    # runs/ must exist and be writable by the brokers' non-root user before compose
    # bind-mounts it (Docker would make a missing one as root)
    subprocess.run(
        [str(repo_root / "scripts" / "ensure-run-dir.sh"), "runs"], cwd=repo_root, check=True
    )
    names = [
        *(f"ZK{i}_PORT" for i in (1, 2, 3)),
        *(f"BROKER{i}_PORT" for i in (1, 2, 3)),
        *(f"BROKER{i}_METRICS_PORT" for i in (1, 2, 3)),
    ]
    picked = [str(p) for p in free_ports(len(names))] if stable_ports else [""] * len(names)
    overrides = {
        "COMPOSE_PROJECT_NAME": project,
        "RUN_ID": run_id,
        PROFILE_ENV: FAST,
        "ZK_SESSION_TIMEOUT_MS": str(session_ms),
        "TESTCONTAINERS_RYUK_DISABLED": "true",
        **dict(zip(names, picked, strict=True)),
        **(env or {}),
    }
    files = ["docker-compose.yml"]
    if disk_layers:
        try:
            start_layers(layer_root(), project)
        except (DiskLayerError, TimeoutError) as exc:
            stop_layers(layer_root(), project)
            raise ComposeStartError(f"the disk layers did not come up: {exc}") from None
        overrides[COMPOSE_ENV] = str(layer_root() / project)
        files.append(DISK_COMPOSE_FILE)
    saved = {key: os.environ.get(key) for key in overrides}
    os.environ.update(overrides)
    compose = DockerCompose(repo_root, compose_file_name=files, wait=True)
    try:
        try:
            with _quiet(_COMPOSE_LOGGER):
                compose.start()
        except subprocess.CalledProcessError as exc:
            raise ComposeStartError(_start_failure(exc, project)) from None
        ports = [compose.get_service_port(f"zk{i}", 2181) for i in (1, 2, 3)]
        cluster = ComposeCluster(
            compose,
            project,
            repo_root / "runs" / run_id,
            ",".join(f"127.0.0.1:{port}" for port in ports),
            credentials,
            client,
            zk_tls,
        )
        zk = cluster.zk()
        try:
            kzk = KafkaZkClient(zk)
            wait_until(
                lambda: (
                    len(kzk.get_all_brokers().brokers) == 3 and kzk.get_controller_id() is not None
                ),
                60,
                "compose cluster did not register 3 brokers and a controller",
            )
        finally:
            zk.stop()
            zk.close()
        yield cluster
    finally:
        compose.stop(down=True)
        if disk_layers:
            stop_layers(layer_root(), project, remove=True)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextmanager
def tier_cluster(
    repo_root: Path, prefix: str, tier: str, session_ms: int, stable_ports: bool = False
) -> Iterator[ComposeCluster]:
    """A test tier's compose cluster: project `<prefix>-<pid>`, event logs in
    `runs/<tier>-<time>`, ports as `started_project` picks them; `ComposeStartError`
    also when an image is missing."""
    missing = missing_images()
    if missing:
        raise ComposeStartError(
            f"images missing: {', '.join(missing)}; run `make images` (or `make test`)."
        )
    project = f"{prefix}-{os.getpid()}"
    with started_project(repo_root, project, new_run_id(tier), session_ms, stable_ports) as cluster:
        yield cluster


def new_run_id(tier: str) -> str:
    """`<tier>-<UTC time>`: the run directory of a tier's project."""
    return f"{tier}-{time.strftime('%Y%m%d-%H%M%S')}"


#: The lines of compose's own output, and of each failing container's log, a failed
#: start keeps.
START_LOG_TAIL = 30
#: compose's progress lines (`Container x  Started`), left out of a failed start's output.
_PROGRESS = re.compile(
    r"^\s*(Container|Network|Volume)\s.*\s"
    r"(Creating|Created|Recreate|Recreated|Starting|Started|Waiting|Healthy|Running)$"
)
#: testcontainers logs the whole output of a failed `up` at ERROR; `ComposeStartError`
#: holds what matters of it already.
_COMPOSE_LOGGER = logging.getLogger("testcontainers.compose.compose")


@contextmanager
def _quiet(logger: logging.Logger) -> Iterator[None]:
    """`logger` silent for the block."""
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(level)


@dataclass(frozen=True, slots=True)
class ContainerState:
    """A container of a project that did not come up: its name, status, health check
    state, exit code (None: still running) and the tail of its log."""

    name: str
    status: str
    health: str
    exit_code: int | None
    log: str

    @property
    def rank(self) -> int:
        """How surely it kept the project from coming up: 0 it stopped, 1 its health
        check fails, 2 its health check has not passed yet, 3 it is healthy or was never
        started (it waited on another)."""
        if self.status in ("exited", "dead", "restarting"):
            return 0
        if self.status != "running":
            return 3
        return {"unhealthy": 1, "starting": 2}.get(self.health, 3)


def start_failure_text(command: str, output: str, containers: Sequence[ContainerState]) -> str:
    """A failed start: the command that failed and the end of its output but compose's
    progress lines, then every container most likely at fault first. Those that stopped
    or fail their health check come with their log's tail (when none did, those still
    starting do), the others in one line each."""
    said = [line for line in output.strip().splitlines() if not _PROGRESS.match(line)]
    tail = said[-START_LOG_TAIL:]
    lines = [command, *tail]
    worst = min((c.rank for c in containers), default=3)
    for state in sorted(containers, key=lambda c: (c.rank, c.name)):
        exited = "" if state.exit_code is None else f" (exit code {state.exit_code})"
        lines.append(f"--- {state.name}: {state.status}{exited}, health {state.health}")
        if state.rank <= max(1, worst) and state.rank < 3:
            lines.append(state.log.rstrip() or "(its log is empty)")
    return "\n".join(lines)


def _start_failure(exc: subprocess.CalledProcessError, project: str) -> str:
    """What `docker compose up --wait` printed, and each container's state and last log
    lines, so that a failed start says why."""
    output = "\n".join(
        stream.decode(errors="replace") if isinstance(stream, bytes) else stream
        for stream in (exc.stdout, exc.stderr)
        if stream
    )
    client = DockerClient.from_env()
    label = f"com.docker.compose.project={project}"
    states = []
    for container in client.containers.list(all=True, filters={"label": label}):
        state = container.attrs.get("State", {})
        states.append(
            ContainerState(
                container.name,
                container.status,
                state.get("Health", {}).get("Status", "-"),
                state.get("ExitCode") if container.status == "exited" else None,
                container.logs(tail=START_LOG_TAIL).decode(errors="replace"),
            )
        )
    command = f"`{' '.join(map(str, exc.cmd))}` exited with {exc.returncode}"
    return start_failure_text(command, output, states)
