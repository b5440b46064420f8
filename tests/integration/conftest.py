"""Fixtures for the integration tier: one real ZooKeeper ensemble per test session."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from harness.brokers import BrokerProcess
from harness.zk_ensemble import (
    ZkEnsemble,
    missing_prerequisites,
    new_chroot,
    open_client,
)


@pytest.fixture(scope="session", autouse=True)
def plaintext_tools() -> Iterator[None]:
    """The tier's brokers speak plaintext unless a test gives one a TLS directory, so the
    tools run in-process here (the CLI, the workload) do not default to `.secrets/tls`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TLS_DIR", "off")
        yield


@pytest.fixture(scope="session")
def zk_ensemble(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZkEnsemble]:
    """A running 3-server ensemble shared by the whole session, killed at its end.

    Set up and torn down on pytest's main thread. Fails (never skips) when Java or
    Debian's ZooKeeper is missing.
    """
    missing = missing_prerequisites()
    if missing:
        pytest.fail(
            "the integration tier needs a local ZooKeeper: "
            + "; ".join(missing)
            + ". Run `make test`, which installs Debian's `zookeeper` package and Java.",
            pytrace=False,
        )
    ensemble = ZkEnsemble(Path(tmp_path_factory.mktemp("zk-ensemble")))
    try:
        ensemble.start()
        yield ensemble
    finally:
        ensemble.stop()


@pytest.fixture
def zk_chroot(zk_ensemble: ZkEnsemble) -> str:
    """A fresh chroot path whose node already exists; created on the test's thread."""
    chroot = new_chroot()
    with open_client(zk_ensemble.connect_string()) as admin:
        admin.ensure_path(chroot)
    return chroot


@pytest.fixture
def zk_connect(zk_ensemble: ZkEnsemble, zk_chroot: str) -> str:
    """The connect string of every ensemble member, chrooted to ``zk_chroot``."""
    return zk_ensemble.connect_string(zk_chroot)


@pytest.fixture
def zk_client(zk_connect: str) -> Iterator[KazooClient]:
    """A started ``KazooClient`` (timeout=10) on ``zk_connect``, stopped and closed after."""
    with open_client(zk_connect, timeout=10) as client:
        yield client


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A run directory for this test's event logs."""
    path = tmp_path / "run"
    path.mkdir()
    return path


@pytest.fixture
def brokers(zk_connect: str, run_dir: Path) -> Iterator[BrokerFactory]:
    """Start broker processes on demand; every one is killed when the test ends."""
    started: list[BrokerProcess] = []

    def start(
        broker_id: int,
        session_timeout_ms: int = 3000,
        connect: str | None = None,
        extra_args: tuple[str, ...] = (),
        tls_dir: Path | None = None,
    ) -> BrokerProcess:
        broker = BrokerProcess(
            broker_id, connect or zk_connect, run_dir, session_timeout_ms, tls_dir=tls_dir
        )
        broker.start(*extra_args)
        started.append(broker)
        return broker

    yield start
    for broker in started:
        broker.kill()


BrokerFactory = Callable[..., BrokerProcess]


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """The pipeline's local Spark session (`local[2]`), one per test run, stopped at its
    end. Typed `object` so that this module does not import pyspark for every test. A
    gateway JVM that dies at birth ("Java gateway process exited", seen once after a fork
    made while gRPC's threads were busy in this process) is started once more, saying so."""
    from pipeline.session import spark_session

    try:
        session = spark_session()
    except Exception as exc:  # the gateway JVM died at birth: start it once more
        print(f"\nthe Spark session did not start ({exc}); starting it again", file=sys.stderr)
        session = spark_session()
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="session")
def pipeline_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Synthetic run directories: two clean runs (two scenarios) and one per break, a
    directory that is not a run, a comparison of two builds and a blind hunt's
    summary."""
    from pipeline.comparison_testing import write_comparison
    from pipeline.hunt_testing import write_hunt
    from pipeline.testing import BREAKS, write_run

    root = Path(tmp_path_factory.mktemp("runs"))
    write_run(root, "20260101-000000-broker-failure-s1")
    write_run(root, "20260101-000100-controller-pause-s1", scenario="controller-pause", offset=300)
    for i, name in enumerate(sorted(BREAKS)):
        write_run(root, f"20260101-00{i + 2}00-{name}", breaks=frozenset({name}))
    (root / "docker-tier-leftovers").mkdir()
    write_comparison(root, "compare-20260101-001000")  # linked, not a run, not skipped
    write_hunt(root, "hunt-20260101-002000")  # a blind hunt's summary: a table, not skipped
    return root


@pytest.fixture(scope="session")
def local_report(
    spark: object, pipeline_runs: Path, tmp_path_factory: pytest.TempPathFactory
) -> object:
    """The report of `pipeline_runs` built in local mode (a `pipeline.report.Report`)."""
    from pipeline.report import build_report

    return build_report(spark, [pipeline_runs], Path(tmp_path_factory.mktemp("report")))  # type: ignore[arg-type]
