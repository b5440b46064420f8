"""What a benchmark run happened on: the machine (CPU count and model, Python, platform;
never the host name), and the run's revision, load average and finishing time.

Other work on this 2-core box skews every figure, so each run records the load average
before and after it. Main thread.
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.shared.settings import REPO_ROOT

CPUINFO = Path("/proc/cpuinfo")


def cpu_model(cpuinfo: str) -> str | None:
    """The first `model name` of a /proc/cpuinfo text, or None."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return value.strip()
    return None


def machine() -> dict[str, Any]:
    """CPU count and model, Python version and platform (kernel and libc, no host name)."""
    try:
        model = cpu_model(CPUINFO.read_text(errors="replace"))
    except OSError:
        model = None
    return {
        "cpus": os.cpu_count(),
        "model": model or platform.processor() or None,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def git_revision() -> str | None:
    """`git describe --always --dirty` of the checkout, or None."""
    try:
        revision = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        revision = ""
    return revision or None


def environment(load_at_start: tuple[float, float, float], finished_at: str) -> dict[str, Any]:
    """The machine and revision, with the load average at the start and now."""
    return {
        **machine(),
        "git": git_revision(),
        "loadavg_at_start": list(load_at_start),
        "loadavg_at_end": list(os.getloadavg()),
        "finished_at_utc": finished_at,
    }


def utc_now() -> str:
    """The time now as `2024-01-31T12:00:00Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
