"""Files that hold secrets: written atomically, readable by their owner only (0600, in a
0700 directory), and handed to the containers' user when the set-up runs as root (the
broker image's user must read what is mounted into it). Caller's thread.

    SecretFileError        a secret file is missing, unreadable or open to others
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class SecretFileError(Exception):
    """A secret file is missing, unreadable, malformed or readable by others. The message
    names the file, never its content."""


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` with mode 0600 (its directory 0700), replacing it atomically:
    the content is never readable by others, not even for a moment."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, path)


def read_private(path: Path) -> str:
    """The content of a secret file; `SecretFileError` when it is missing or unreadable, or
    when its mode lets the group or others read or write it."""
    try:
        mode = path.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise SecretFileError(
                f"{path} is open to other users (mode {stat.S_IMODE(mode):04o}); chmod 600 {path}"
            )
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SecretFileError(f"cannot read {path}: {exc.strerror or exc}") from None


def hand_over(directory: Path, uid: int, gid: int) -> None:
    """Give `directory` and everything under it to `uid:gid` when this process runs as root (a
    root host can read them anyway; the containers' user could not). No-op otherwise."""
    if os.geteuid() != 0:
        return
    for root, dirs, files in os.walk(directory):
        os.chown(root, uid, gid)
        for name in (*dirs, *files):
            os.chown(Path(root) / name, uid, gid)
