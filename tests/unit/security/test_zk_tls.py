"""A ZooKeeper client's TLS (`security.zk_tls`): the kazoo options and socket context it
gives, the files it checks, and how it joins the digest options. Files only in pytest's
directory."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from security.tls import ensure_tls
from security.tls_files import BROKER, CLIENT, TlsMaterialError
from security.zk_credentials import generate, kazoo_options
from security.zk_tls import ZkTls, zk_tls_choice


@pytest.fixture(name="tls_dir")
def _tls_dir(tmp_path: Path) -> Path:
    return ensure_tls(tmp_path).files.directory


def test_kazoo_options_trust_the_ca_and_present_the_roles_certificate(tls_dir: Path) -> None:
    options = ZkTls(tls_dir, BROKER).kazoo_options()
    assert options == {
        "use_ssl": True,
        "ca": str(tls_dir / "ca.crt"),
        "certfile": str(tls_dir / "broker.crt"),
        "keyfile": str(tls_dir / "broker.key"),
        "verify_certs": True,
        "check_hostname": True,
    }


def test_the_digest_login_and_tls_go_together(tls_dir: Path) -> None:
    credentials = generate()
    options = kazoo_options(credentials, ZkTls(tls_dir))
    assert options["auth_data"] == credentials.auth_data
    assert options["use_ssl"] is True
    assert options["certfile"] == str(tls_dir / "client.crt")
    assert "use_ssl" not in kazoo_options(credentials)


def test_the_socket_context_verifies_the_server_and_holds_a_certificate(tls_dir: Path) -> None:
    context = ZkTls(tls_dir).ssl_context()
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert len(context.get_ca_certs()) == 1  # the cluster's CA, nothing else


def test_a_missing_file_is_named_up_front(tls_dir: Path) -> None:
    (tls_dir / "client.key").unlink()
    with pytest.raises(TlsMaterialError, match=r"client\.key.*security init"):
        ZkTls(tls_dir, CLIENT).check()
    assert ZkTls(tls_dir, BROKER).check().role == BROKER
    with pytest.raises(TlsMaterialError, match="unknown role"):
        ZkTls(tls_dir, "zk1").check()


def test_no_directory_means_plaintext(tls_dir: Path) -> None:
    assert zk_tls_choice(None) is None
    assert zk_tls_choice(tls_dir) == ZkTls(tls_dir, CLIENT)
