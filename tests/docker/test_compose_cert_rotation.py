"""`python -m security rotate` replaces the CA of a running compose cluster: afterwards a
client holding only the new CA and certificates reaches ZooKeeper and the brokers, and
one holding only the old ones is refused by both.

Setup: a compose project of its own, in a copy of the repository's docker-compose.yml
with secrets of its own (`python -m security init`), so that rotating them touches
neither the repository's `.secrets` nor the docker tier's shared project; stable ports, so
the restarted containers keep them. A copy of its TLS directory is kept as the old client.
Steps: `python -m security rotate --dir <secrets> --project <project>`.
Validate: it exits 0, printed each of the 18 restarts (3 passes over 3 ZooKeeper servers
and 3 brokers) as serving again, and left one CA in `ca.crt`, another than before, and no
rotation state; with the new files a kazoo session starts and every broker answers
Metadata with the 3 brokers; with the old files the session never connects and every
broker's Metadata fails in the handshake.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.handlers.threading import KazooTimeoutError

from harness.compose import ComposeCluster, ComposeStartError, new_run_id, started_project
from rpc.errors import RpcError
from rpc.wire import ClientApiClient
from security.__main__ import main as security_main
from security.rotation import pem_certificates
from security.tls_files import CA, CLIENT, TlsFiles, load_identity
from security.zk_credentials import kazoo_options
from security.zk_tls import ZkTls

pytestmark = pytest.mark.docker

REPO_ROOT = Path(__file__).resolve().parents[2]
SESSION_MS = 3000
#: One try, a short session: a refused client must fail fast, not retry for a minute.
REFUSED_OPTIONS = {"timeout": 3, "connection_retry": {"max_tries": 2, "delay": 0.2}}


@pytest.fixture(scope="module")
def own_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ComposeCluster]:
    """The compose cluster in a directory of its own, with secrets of its own."""
    root = tmp_path_factory.mktemp("rotation")
    shutil.copy(REPO_ROOT / "docker-compose.yml", root / "docker-compose.yml")
    shutil.copytree(REPO_ROOT / "scripts", root / "scripts")
    owner = subprocess.run(
        ["scripts/container-user.sh"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert security_main(["init", "--dir", str(root / ".secrets"), "--owner", owner]) == 0
    project = f"testbed-rotation-{os.getpid()}"
    try:
        with started_project(
            root, project, new_run_id("rotation"), SESSION_MS, stable_ports=True
        ) as cluster:
            yield cluster
    except ComposeStartError as exc:
        pytest.fail(str(exc), pytrace=False)


def _session_starts(cluster: ComposeCluster, tls: ZkTls) -> bool:
    options = {**kazoo_options(cluster.zk_credentials, tls), **REFUSED_OPTIONS}
    client = KazooClient(hosts=cluster.zk_connect, **options)
    try:
        client.start(timeout=10)
    except KazooTimeoutError:
        return False
    finally:
        client.stop()
        client.close()
    return True


def test_a_rotation_leaves_only_the_new_ca_trusted(
    own_project: ComposeCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = own_project
    secrets = Path(cluster.compose.context) / ".secrets"
    files = TlsFiles(secrets / "tls")
    old_dir = tmp_path / "old-tls"
    shutil.copytree(files.directory, old_dir)
    old_ca = pem_certificates(files.cert(CA).read_bytes())

    code = security_main(["rotate", "--dir", str(secrets), "--project", cluster.project])
    said = capsys.readouterr()

    assert code == 0, said.err
    served = [line for line in said.out.splitlines() if "serving again" in line]
    assert len(served) == 18, said.out
    new_ca = pem_certificates(files.cert(CA).read_bytes())
    assert len(new_ca) == 1
    assert new_ca != old_ca
    assert not files.rotation_state.exists()

    assert _session_starts(cluster, ZkTls(files.directory))
    new_identity = load_identity(files.directory, CLIENT)
    for address in cluster.broker_addresses().values():
        with ClientApiClient(address, timeout_s=10, tls=new_identity) as api:
            assert sorted(b.id for b in api.metadata().brokers) == [1, 2, 3]

    assert not _session_starts(cluster, ZkTls(old_dir)), "the old CA's client reached ZooKeeper"
    old_identity = load_identity(old_dir, CLIENT)
    for address in cluster.broker_addresses().values():
        with (
            ClientApiClient(address, timeout_s=5, tls=old_identity) as api,
            pytest.raises(RpcError),
        ):
            api.metadata()
