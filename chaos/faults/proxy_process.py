"""The host processes a network fault runs as proxies (`latency`'s delay proxy, the
`request` fault's relay): found by a marker and a `--tag` in their command line, so that
a fault rebuilt from its description (heal) finds the processes of the fault that was
started, and terminated with a verified end.

Thread-safety: runs on the caller's thread (the injector's); no shared state.
"""

from __future__ import annotations

from chaos.errors import FaultFailed
from harness.host_processes import cmdline, end, tagged

__all__ = ["END_WAIT_S", "cmdline", "tagged", "terminate"]

#: How long a proxy has to end after each signal.
END_WAIT_S = 5.0


def terminate(pid: int) -> None:
    """SIGTERM, then SIGKILL if it is still there after a few seconds."""
    if not end(pid, END_WAIT_S):
        raise FaultFailed(f"proxy {pid} survived SIGKILL")
