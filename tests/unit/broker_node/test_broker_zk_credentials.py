"""The broker's `--zk-digest-file` / `ZK_DIGEST_FILE`: the credentials are loaded into
`BrokerConfig` at the edge, an unusable file stops the broker with exit 2, and the
config's repr never shows the password."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_node.config import load_config
from security.zk_credentials import ensure_digest_file, load


def test_the_broker_config_repr_hides_the_password(tmp_path: Path) -> None:
    """`--zk-digest-file` loads the credentials into the config; its repr (what a log line
    of the config would show) leaves the password out."""
    path = ensure_digest_file(tmp_path)
    password = load(path).password
    config = load_config(
        ["--broker-id", "1", "--zk-connect", "zk1:2181", "--zk-digest-file", str(path)], env={}
    )
    assert config.zk_credentials == load(path)
    assert password not in repr(config)
    assert password not in str(config)


def test_the_broker_reads_the_digest_file_from_the_environment(tmp_path: Path) -> None:
    """`ZK_DIGEST_FILE` names the file; without it the broker runs unauthenticated."""
    path = ensure_digest_file(tmp_path)
    env = {"ZK_DIGEST_FILE": str(path)}
    assert load_config(["--broker-id", "1", "--zk-connect", "zk1:2181"], env=env).zk_credentials
    assert (
        load_config(["--broker-id", "1", "--zk-connect", "zk1:2181"], env={}).zk_credentials is None
    )


def test_an_unusable_digest_file_stops_the_broker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 naming the option and the file, as every bad configuration does."""
    with pytest.raises(SystemExit) as exited:
        load_config(
            ["--broker-id", "1", "--zk-connect", "zk1:2181", "--zk-digest-file", "/nonexistent"],
            env={},
        )
    assert exited.value.code == 2
    assert "--zk-digest-file: cannot read /nonexistent" in capsys.readouterr().err
