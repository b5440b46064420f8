"""`testbed --zk-tls-dir`: whether a command connects to ZooKeeper over TLS. The flag wins
over `ZK_TLS_DIR`; without either, the repository's `.secrets/tls` is used for the default
local ensemble (the compose cluster, TLS only), never for an ensemble named with `--zk`."""

from __future__ import annotations

from pathlib import Path

import pytest

from security.tls import ensure_tls
from security.tls_files import CLIENT, TlsMaterialError
from security.zk_tls import ZkTls
from testbed import arguments
from testbed.arguments import build_parser, zk_tls


@pytest.fixture
def repo_tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for the repository's `.secrets/tls`."""
    directory = ensure_tls(tmp_path / "repo").files.directory
    monkeypatch.setattr(arguments, "repo_zk_tls", lambda: ZkTls(directory))
    monkeypatch.delenv("ZK_TLS_DIR", raising=False)
    monkeypatch.delenv("ZK_CONNECT", raising=False)
    return directory


def _tls(*argv: str) -> ZkTls | None:
    return zk_tls(build_parser().parse_args(["topics", "list", *argv]))


def test_the_default_ensemble_is_reached_over_tls_with_the_client_certificate(
    repo_tls: Path,
) -> None:
    assert _tls() == ZkTls(repo_tls, CLIENT)


def test_another_ensemble_is_plaintext_unless_a_directory_is_given(
    repo_tls: Path, tmp_path: Path
) -> None:
    assert _tls("--zk", "127.0.0.1:30000/t") is None
    other = ensure_tls(tmp_path / "other").files.directory
    assert _tls("--zk", "127.0.0.1:30000/t", "--zk-tls-dir", str(other)) == ZkTls(other)


def test_the_environment_names_the_directory_and_off_turns_tls_off(
    repo_tls: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = ensure_tls(tmp_path / "env").files.directory
    monkeypatch.setenv("ZK_TLS_DIR", str(other))
    assert _tls("--zk", "127.0.0.1:30000") == ZkTls(other)
    assert _tls("--zk-tls-dir", "off") is None


def test_a_directory_without_the_client_files_is_an_error_naming_it(
    repo_tls: Path, tmp_path: Path
) -> None:
    with pytest.raises(TlsMaterialError, match="absent"):
        _tls("--zk-tls-dir", str(tmp_path / "absent"))
