"""Processes the tools start on the host and find again by their command line (the
faults' proxies, the disk layers' daemons): a marker argument and a `--tag`, so that a
tool rebuilt from a description (heal) finds the processes another one started; and an
end that is waited for.

Runs on the caller's thread; no shared state.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from harness.waiting import wait_until


def cmdline(pid: int) -> list[str]:
    """The process's arguments; empty when it is gone (or a zombie)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def tagged(marker: str, tag_prefix: str) -> dict[int, str]:
    """The host's live processes whose arguments hold `marker` and a `--tag` that starts
    with `tag_prefix`: pid -> tag."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        args = cmdline(int(entry))
        if marker in args and "--tag" in args[:-1]:
            tag = args[args.index("--tag") + 1]
            if tag.startswith(tag_prefix):
                found[int(entry)] = tag
    return found


def gone(pid: int, wait_s: float) -> bool:
    """Whether the process ends within `wait_s`."""
    try:
        wait_until(lambda: not cmdline(pid), wait_s, f"process {pid} still running")
    except TimeoutError:
        return False
    return True


def end(pid: int, wait_s: float) -> bool:
    """SIGTERM, then SIGKILL if it is still there after `wait_s`; False when it survived
    both."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return True
        if gone(pid, wait_s):
            return True
    return False
