"""`security.zk_credentials` and `security.secret_files`: the credential file is made once
with mode 0600 and a random password, loaded back, refused when open to others or
malformed, and the password shows in no repr, str or error; the kazoo options carry the
digest login and Kafka's secure default ACL."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from kazoo.security import ACL, Id, Permissions, make_digest_acl_credential

from security.__main__ import main as security_main
from security.secret_files import SecretFileError, write_private
from security.zk_credentials import (
    DEFAULT_USER,
    FILE_NAME,
    ZkDigestCredentials,
    ensure_digest_file,
    generate,
    kazoo_options,
    load,
    parse,
)
from zkdata.kazoo_handler import PollingHandler


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_digest_file_is_private_random_and_made_once(tmp_path: Path) -> None:
    """`<user>:<password>` in a 0600 file inside a 0700 directory; a second call keeps it."""
    directory = tmp_path / ".secrets"
    path = ensure_digest_file(directory)
    assert path == directory / FILE_NAME
    assert (_mode(path), _mode(directory)) == (0o600, 0o700)
    first = load(path)
    assert first.user == DEFAULT_USER
    assert len(first.password) >= 32
    assert ensure_digest_file(directory) == path
    assert load(path) == first
    assert ensure_digest_file(tmp_path / "other").read_text() != path.read_text()


def test_generated_passwords_differ() -> None:
    """Each generation draws a fresh password."""
    assert len({generate().password for _ in range(20)}) == 20


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o644])
def test_a_file_open_to_others_is_refused(tmp_path: Path, mode: int) -> None:
    """Group or world bits on the file: refused, naming the file and the mode, not the
    content."""
    path = tmp_path / FILE_NAME
    path.write_text("testbed:sesame\n")
    path.chmod(mode)
    with pytest.raises(SecretFileError, match=f"mode {mode:04o}") as caught:
        load(path)
    assert "sesame" not in str(caught.value)


@pytest.mark.parametrize(
    "text", ["", "\n", "testbed", "testbed:", ":sesame", "test bed:sesame", "testbed:ses ame\n"]
)
def test_malformed_credentials_are_refused_without_echoing_them(text: str) -> None:
    """Not one `<user>:<password>` line without blanks: `SecretFileError` naming only the
    source."""
    with pytest.raises(SecretFileError) as caught:
        parse(text, "the file")
    assert str(caught.value).startswith("the file")
    assert "sesame" not in str(caught.value)


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    """A path that does not exist: `SecretFileError` naming it."""
    with pytest.raises(SecretFileError, match="cannot read"):
        load(tmp_path / "absent")


def test_a_damaged_file_is_never_overwritten(tmp_path: Path) -> None:
    """An existing file that does not parse stops the set-up instead of being replaced
    (the running cluster's identity would change under it)."""
    write_private(tmp_path / FILE_NAME, "garbage")
    with pytest.raises(SecretFileError):
        ensure_digest_file(tmp_path)
    assert (tmp_path / FILE_NAME).read_text() == "garbage"


def test_the_password_shows_in_no_repr_or_str() -> None:
    """repr and str of the credentials name the user only."""
    creds = ZkDigestCredentials("testbed", "open-sesame-123")
    assert "open-sesame-123" not in repr(creds)
    assert "open-sesame-123" not in str(creds)
    assert "testbed" in repr(creds)


def test_kazoo_options_log_in_by_digest_and_create_with_kafkas_secure_acl() -> None:
    """auth_data is the digest login; default_acl is creator-all plus world-read; without
    credentials neither is set (open znodes). Either way the session gets a polling handler
    of its own."""
    creds = ZkDigestCredentials("testbed", "sesame")
    options = kazoo_options(creds)
    assert options["auth_data"] == [("digest", "testbed:sesame")]
    assert options["default_acl"] == [
        ACL(Permissions.ALL, Id("auth", "")),
        ACL(Permissions.READ, Id("world", "anyone")),
    ]
    without = kazoo_options(None)
    assert list(without) == ["handler"]
    assert isinstance(without["handler"], PollingHandler)
    assert without["handler"] is not options["handler"]  # a handler serves one session
    assert creds.acl_id == make_digest_acl_credential("testbed", "sesame")


def test_init_creates_the_secrets_and_prints_no_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python -m security init --dir D` makes the file (and keeps it on a rerun); its
    output names the file, never the password."""
    directory = tmp_path / ".secrets"
    assert security_main(["init", "--dir", str(directory)]) == 0
    password = load(directory / FILE_NAME).password
    assert security_main(["init", "--dir", str(directory)]) == 0
    assert load(directory / FILE_NAME).password == password
    out = capsys.readouterr().out
    assert str(directory / FILE_NAME) in out
    assert password not in out


def test_init_reports_a_damaged_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file that does not parse: exit 1 with the reason."""
    write_private(tmp_path / FILE_NAME, "garbage")
    assert security_main(["init", "--dir", str(tmp_path)]) == 1
    assert "must hold one line" in capsys.readouterr().err
