"""One hunt per compose project at a time: `held(directory, project)` holds an exclusive
`flock` on `<directory>/.lock-<project>` for as long as its `with` block runs, and raises
`ProjectBusy` at once when another process holds it. A second hunt on the same project
would recreate the first one's brokers and tear its containers down under it.

The lock goes with the process: a killed hunt leaves the file but not the lock. Runs on
the caller's thread.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from chaos.errors import ChaosError


class ProjectBusy(ChaosError):
    """Another process holds the project's lock."""


@contextmanager
def held(directory: Path, project: str) -> Iterator[Path]:
    """Hold the project's lock file (created if missing) for the block; its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f".lock-{project}"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "another process"
            raise ProjectBusy(
                f"project {project} is in use by {holder} ({path}); wait for it to end"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}\n".encode())
        yield path
    finally:
        os.close(fd)
