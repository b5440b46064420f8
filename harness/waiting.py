"""Deadline-bounded polling: the only way the test tiers wait for something to happen.
Blocks the calling thread (a test's)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar, cast

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T | bool | None],
    timeout: float,
    message: str | Callable[[], str],
    interval: float = 0.05,
) -> T:
    """Poll ``condition`` until it returns a truthy value and return that value.

    Runs entirely on the calling thread: ``condition`` is invoked there, at least
    once, then every ``interval`` seconds until ``timeout`` seconds have passed.
    Exceptions raised by ``condition`` propagate unchanged. On the deadline a
    ``TimeoutError`` is raised carrying ``message`` (called first if it is a
    callable, so it can describe the state at the moment of failure) and the
    elapsed time.
    """
    if timeout < 0:
        raise ValueError(f"timeout must be >= 0, got {timeout}")
    if interval <= 0:
        raise ValueError(f"interval must be > 0, got {interval}")
    start = time.monotonic()
    deadline = start + timeout
    while True:
        result = condition()
        if result:
            return cast(T, result)
        now = time.monotonic()
        if now >= deadline:
            text = message() if callable(message) else message
            raise TimeoutError(f"{text} (gave up after {now - start:.2f}s)")
        time.sleep(min(interval, deadline - now))
