"""Test helpers for secured ZooKeeper trees (the test's thread)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kazoo.exceptions import NoAuthError


def refused_writes(writes: Mapping[str, Callable[[], object]]) -> list[str]:
    """Try each named write in turn; the names of those ZooKeeper refused with NoAuth, in
    order (a write that went through is left out; any other error propagates)."""
    refused = []
    for name, write in writes.items():
        try:
            write()
        except NoAuthError:
            refused.append(name)
    return refused
