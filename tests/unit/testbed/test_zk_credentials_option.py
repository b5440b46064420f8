"""`testbed --zk-digest-file`: which credentials a command authenticates with. The flag
wins over `ZK_DIGEST_FILE`; without either, the repository's `.secrets/zk-digest` is used
for the default local ensemble only, never for an ensemble named with `--zk`."""

from __future__ import annotations

from pathlib import Path

import pytest

from security.secret_files import SecretFileError
from security.zk_credentials import ensure_digest_file, load
from testbed import arguments
from testbed.arguments import DEFAULT_ZK, build_parser, zk_credentials


@pytest.fixture
def repo_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for the repository's `.secrets/zk-digest`."""
    path = ensure_digest_file(tmp_path / "repo")
    monkeypatch.setattr(arguments, "repo_digest_file", lambda: path)
    monkeypatch.delenv("ZK_DIGEST_FILE", raising=False)
    monkeypatch.delenv("ZK_CONNECT", raising=False)
    return path


def _credentials(*argv: str) -> object:
    return zk_credentials(build_parser().parse_args(["topics", "list", *argv]))


def test_the_default_ensemble_uses_the_repositorys_secret(repo_secret: Path) -> None:
    """No `--zk`, no flag, no environment: the compose cluster's identity."""
    assert _credentials() == load(repo_secret)
    assert _credentials("--zk", DEFAULT_ZK) == load(repo_secret)


def test_another_ensemble_is_reached_without_credentials_unless_given(
    repo_secret: Path, tmp_path: Path
) -> None:
    """An ensemble named with `--zk` gets no credentials by default; the flag gives them."""
    assert _credentials("--zk", "127.0.0.1:30000/t") is None
    other = ensure_digest_file(tmp_path / "other")
    given = _credentials("--zk", "127.0.0.1:30000/t", "--zk-digest-file", str(other))
    assert given == load(other)


def test_the_environment_names_the_file(
    repo_secret: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ZK_DIGEST_FILE` is the flag's default, for any ensemble."""
    other = ensure_digest_file(tmp_path / "env")
    monkeypatch.setenv("ZK_DIGEST_FILE", str(other))
    assert _credentials() == load(other)
    assert _credentials("--zk", "127.0.0.1:30000") == load(other)


def test_an_unusable_file_is_an_error_naming_it(repo_secret: Path, tmp_path: Path) -> None:
    """A missing file given with the flag: `SecretFileError` (the CLI prints it, exit 1)."""
    with pytest.raises(SecretFileError, match="absent"):
        _credentials("--zk-digest-file", str(tmp_path / "absent"))


def test_without_a_repository_secret_the_default_ensemble_is_open(
    repo_secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before `make setup` the CLI connects without credentials."""
    monkeypatch.setattr(arguments, "repo_digest_file", lambda: None)
    assert _credentials() is None
