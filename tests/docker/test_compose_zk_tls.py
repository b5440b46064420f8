"""ZooKeeper in the compose cluster listens on TLS only and admits only certificates of
the cluster's CA; its servers talk to each other over TLS too.

Setup: the docker tier's compose project (`compose_cluster`), whose ZooKeeper servers
mount their own key store (`.secrets/tls/zkN.pem`) and the CA.
Steps: on zk1's published client port, a plaintext kazoo session and a plaintext `srvr`;
a TLS client whose certificate another CA signed; the project's client certificate.
Validate: the plaintext session never connects and `srvr` gets no answer; the handshake
with the foreign certificate is refused with a TLS alert and kazoo cannot connect with
it; the project's certificate gets `srvr` and a session, and every server's configuration
has no plaintext client port and TLS between the servers.
"""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.handlers.threading import KazooTimeoutError

from harness.compose import ComposeCluster
from security.tls import ensure_tls
from security.zk_tls import ZkTls
from zkdata.fourletter import four_letter_word

pytestmark = pytest.mark.docker

#: One try, a short session: a refused client must fail fast, not retry for a minute.
REFUSED_OPTIONS = {"timeout": 3, "connection_retry": {"max_tries": 2, "delay": 0.2}}


def _zk1(cluster: ComposeCluster) -> tuple[str, int]:
    host, _, port = cluster.zk_connect.split(",")[0].rpartition(":")
    return host, int(port)


def _cannot_start(client: KazooClient) -> bool:
    try:
        client.start(timeout=5)
    except KazooTimeoutError:
        return True
    finally:
        client.stop()
        client.close()
    return False


def test_a_plaintext_client_is_refused_at_the_port(compose_cluster: ComposeCluster) -> None:
    host, port = _zk1(compose_cluster)
    plain = KazooClient(hosts=f"{host}:{port}", **REFUSED_OPTIONS)
    assert _cannot_start(plain), "a plaintext session connected to zk1"
    try:
        reply = four_letter_word(host, port, "srvr", timeout_s=5)
    except OSError:
        reply = ""  # reset by the server: refused as well
    assert "Mode:" not in reply
    assert compose_cluster.zk_tls is not None
    secure = four_letter_word(host, port, "srvr", 5, compose_cluster.zk_tls.ssl_context())
    assert "Mode:" in secure


def test_a_certificate_of_another_ca_is_refused(
    compose_cluster: ComposeCluster, tmp_path: Path
) -> None:
    """The foreign client trusts the cluster's CA (so it accepts the server), but presents
    a certificate its own CA signed."""
    assert compose_cluster.zk_tls is not None
    foreign = ZkTls(ensure_tls(tmp_path).files.directory)
    options = {
        **foreign.kazoo_options(),
        "ca": str(compose_cluster.zk_tls.files.cert("ca")),
        "check_hostname": False,
    }
    host, port = _zk1(compose_cluster)
    intruder = KazooClient(hosts=f"{host}:{port}", **REFUSED_OPTIONS, **options)
    assert _cannot_start(intruder), "a certificate of another CA connected to zk1"
    context = ssl.create_default_context(cafile=options["ca"])
    context.check_hostname = False
    context.load_cert_chain(options["certfile"], options["keyfile"])
    with pytest.raises(ssl.SSLError, match=r"(?i)alert|certificate"):
        four_letter_word(host, port, "srvr", 5, context)


def test_every_server_is_tls_only_with_tls_between_servers(
    compose_cluster: ComposeCluster,
) -> None:
    for service in ("zk1", "zk2", "zk3"):
        container = compose_cluster.container(service)
        result = container.exec_run(["cat", "/data/zoo.cfg"])
        assert result.exit_code == 0, result.output
        config = dict(
            line.split("=", 1) for line in result.output.decode().splitlines() if "=" in line
        )
        assert "clientPort" not in config, service
        assert config["secureClientPort"] == "2181", service
        assert config["serverCnxnFactory"].endswith("NettyServerCnxnFactory"), service
        assert config["ssl.clientAuth"] == "need", service
        assert config["sslQuorum"] == "true", service
        logs = container.logs().decode(errors="replace")
        assert "Using TLS encrypted quorum communication" in logs, service
