"""Progress lines on stdout: `==> phase` headers and indented details, flushed at once so
that a long run shows where it is. Main thread.
"""

from __future__ import annotations

import sys


def phase(text: str) -> None:
    """Announce a phase: `==> text`."""
    print(f"==> {text}", flush=True)


def detail(text: str) -> None:
    """A line of detail under the current phase."""
    print(f"    {text}", flush=True)


def warn(text: str) -> None:
    """Something the reader should know about the run, on stderr."""
    print(f"bench: warning: {text}", file=sys.stderr, flush=True)
