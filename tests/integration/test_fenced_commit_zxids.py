"""Every multi of fenced writes that commits is reported with the zxid it committed at,
read from the reply header: for a multi holding a SetData it equals the Stat's mzxid, and
a multi of creates or deletes (which answer no Stat) gets its own. A multi the epoch
check fails, and a write refused on its own, are not reported.

Against a real ensemble: the zxid is ZooKeeper's, not something a fake could vouch for.
"""

from __future__ import annotations

import pytest
from kazoo.client import KazooClient

from zkdata import paths
from zkdata.errors import ControllerMovedError
from zkdata.fenced_writes import (
    Committed,
    Create,
    Delete,
    FencedWriter,
    NewVersion,
    SetData,
    observe_commits,
)

pytestmark = pytest.mark.integration


def test_each_committed_multi_is_reported_with_its_own_zxid(zk_client: KazooClient) -> None:
    zk_client.create(paths.CONTROLLER_EPOCH, b"1", makepath=True)
    zk_client.create("/a", b"0")
    zk_client.create("/b", b"0")
    seen: list[Committed] = []
    observe_commits(zk_client, seen.append)
    writer = FencedWriter(zk_client)
    try:
        first = writer.write([SetData("/a", b"1", 0), Delete("/b")], 0)
        assert isinstance(first[0], NewVersion)
        assert [c.zxid for c in seen] == [first[0].zxid]
        assert seen[0].ops == (SetData("/a", b"1", 0), Delete("/b"))
        assert seen[0].epoch_zk_version == 0

        writer.write([Create("/c", b"")], 0)  # a create answers its path, no Stat
        stat = zk_client.exists("/c")
        assert stat is not None
        assert seen[-1].zxid == stat.czxid > first[0].zxid

        # one write refused (a stale version): the batch is redone one write per multi,
        # and only the write that committed is reported
        mixed = writer.write([SetData("/a", b"x", 0), SetData("/c", b"2", 0)], 0)
        assert isinstance(mixed[0], Exception)
        assert isinstance(mixed[1], NewVersion)
        assert seen[-1].ops == (SetData("/c", b"2", 0),)
        assert seen[-1].zxid == mixed[1].zxid
        count = len(seen)

        zk_client.set(paths.CONTROLLER_EPOCH, b"2")  # another controller bumped the epoch
        with pytest.raises(ControllerMovedError):
            writer.write([SetData("/a", b"3", 1)], 0)
        assert len(seen) == count

        observe_commits(zk_client, None)
        writer.write([SetData("/a", b"4", 1)], -1)  # checks nothing: commits, unobserved
        assert len(seen) == count
    finally:
        observe_commits(zk_client, None)
