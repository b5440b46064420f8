"""A fenced write adds each SetData of a canonical path to its transaction directly, with
the chroot's prefix computed once: the operations are exactly what kazoo's own `set_data`
adds, with and without a chroot; any other path goes through kazoo's normalization."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kazoo.client import KazooClient

from zkdata.fenced_writes import SetData, _add, chroot_prefix

CHROOTS = ["", "/t-abc", "/deep/chroot", "/trailing/"]

segment = st.text(alphabet="abcz09-_.", min_size=1, max_size=8)


def _client(chroot: str) -> KazooClient:
    # never started: a transaction only collects operations
    return KazooClient(hosts=f"127.0.0.1:1{chroot}")


def _ops(tx: object) -> list[tuple[str, bytes, int]]:
    return [(op.path, op.data, op.version) for op in tx.operations]  # type: ignore[attr-defined]


@settings(max_examples=100, deadline=None)
@given(chroot=st.sampled_from(CHROOTS), parts=st.lists(segment, min_size=1, max_size=6))
def test_a_set_data_is_what_kazoo_adds(chroot: str, parts: list[str]) -> None:
    path = "/" + "/".join(parts)
    zk = _client(chroot)
    ours, theirs = zk.transaction(), zk.transaction()
    try:
        theirs.set_data(path, b"state", version=7)
    except ValueError:  # "." or ".." as a segment: kazoo refuses it, and so do we
        with pytest.raises(ValueError, match="relative paths"):
            _add(ours, SetData(path, b"state", 7), chroot_prefix(zk))
        return
    _add(ours, SetData(path, b"state", 7), chroot_prefix(zk))
    assert _ops(ours) == _ops(theirs)


@pytest.mark.parametrize("path", ["/a//b", "/a/b/", "/.hidden/b", "relative/path"])
def test_other_paths_are_normalized_by_kazoo(path: str) -> None:
    zk = _client("/t-abc")
    ours, theirs = zk.transaction(), zk.transaction()
    theirs.set_data(path, b"x", version=1)
    _add(ours, SetData(path, b"x", 1), chroot_prefix(zk))
    assert _ops(ours) == _ops(theirs)


def test_a_dot_segment_is_refused_as_kazoo_refuses_it() -> None:
    zk = _client("/t-abc")
    with pytest.raises(ValueError, match="relative paths"):
        _add(zk.transaction(), SetData("/a/./b", b"x", 1), chroot_prefix(zk))
