"""What a benchmark run happened on: CPUs, Python, platform, git revision, load average.

Other work on this 2-core box skews every figure, so each `bench.json` records the load
average before and after the run. Main thread.
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from typing import Any

from bench.config import REPO_ROOT


def environment(load_at_start: tuple[float, float, float]) -> dict[str, Any]:
    """The machine and revision, with the load average at the start and now."""
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
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "git": revision or None,
        "loadavg_at_start": list(load_at_start),
        "loadavg_at_end": list(os.getloadavg()),
        "finished_at_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
