"""The broker's `--zk-tls-dir` / `ZK_TLS_DIR`: TLS to ZooKeeper with the broker
certificate of the directory, checked at the edge; unset or 'off', plaintext; a directory
without the broker's files stops the broker with exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_node.config import load_config
from security.tls import ensure_tls
from security.tls_files import BROKER
from security.zk_tls import ZkTls

ARGS = ["--broker-id", "1", "--zk-connect", "zk1:2181"]


def test_the_environment_names_the_directory_and_the_broker_certificate_is_used(
    tmp_path: Path,
) -> None:
    directory = ensure_tls(tmp_path).files.directory
    config = load_config(ARGS, env={"ZK_TLS_DIR": str(directory)})
    assert config.zk_tls == ZkTls(directory, BROKER)
    assert config.zk_tls.kazoo_options()["certfile"] == str(directory / "broker.crt")


def test_unset_or_off_is_plaintext(tmp_path: Path) -> None:
    assert load_config(ARGS, env={}).zk_tls is None
    assert load_config([*ARGS, "--zk-tls-dir", "off"], env={}).zk_tls is None


def test_a_directory_without_the_broker_key_stops_the_broker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = ensure_tls(tmp_path).files.directory
    (directory / "broker.key").unlink()
    with pytest.raises(SystemExit) as exited:
        load_config([*ARGS, "--zk-tls-dir", str(directory)], env={})
    assert exited.value.code == 2
    assert "--zk-tls-dir: cannot read the ZooKeeper TLS material" in capsys.readouterr().err
