"""A local ZooKeeper member's client side (`harness.zk_config.member_lines`): plaintext on
loopback, or secured as the compose cluster's servers are."""

from __future__ import annotations

from pathlib import Path

from harness.zk_config import member_lines
from security.zk_tls import ZkTls


def _settings(lines: list[str]) -> dict[str, str]:
    return dict(line.split("=", 1) for line in lines)


def test_a_plain_member_listens_on_loopback_without_an_admin_server() -> None:
    assert _settings(member_lines(None, 1, 2181, 8080)) == {
        "clientPort": "2181",
        "clientPortAddress": "127.0.0.1",
        "admin.enableServer": "false",
    }


def test_a_tls_member_has_no_plaintext_port_and_secures_its_quorum(tmp_path: Path) -> None:
    settings = _settings(member_lines(ZkTls(tmp_path), 2, 2181, 8080))
    assert "clientPort" not in settings
    assert settings["secureClientPort"] == "2181"
    assert settings["ssl.clientAuth"] == settings["ssl.quorum.clientAuth"] == "need"
    assert settings["sslQuorum"] == "true"
    assert settings["ssl.keyStore.location"] == str(tmp_path / "zk2.pem")
    assert settings["ssl.quorum.trustStore.location"] == str(tmp_path / "ca.crt")
    assert (settings["admin.serverAddress"], settings["admin.serverPort"]) == ("127.0.0.1", "8080")
