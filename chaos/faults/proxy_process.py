"""The host processes a network fault runs as proxies (`latency`'s delay proxy, the
`request` fault's relay): found by a marker and a `--tag` in their command line, so that
a fault rebuilt from its description (heal) finds the processes of the fault that was
started, and terminated with a verified end.

Thread-safety: runs on the caller's thread (the injector's); no shared state.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from chaos.errors import FaultFailed
from harness.waiting import wait_until

#: How long a proxy has to end after each signal.
END_WAIT_S = 5.0


def cmdline(pid: int) -> list[str]:
    """The process's arguments; empty when it is gone."""
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


def terminate(pid: int) -> None:
    """SIGTERM, then SIGKILL if it is still there after a few seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        try:
            wait_until(lambda: not cmdline(pid), END_WAIT_S, f"proxy {pid} still running")
            return
        except TimeoutError:
            continue
    raise FaultFailed(f"proxy {pid} survived SIGKILL")
