"""Which `/config/changes` notifications a broker purges: their age is measured on
ZooKeeper's clock (the `ctime`s), never against the broker's own wall clock."""

from __future__ import annotations

from broker_node.config_changes import obsolete_changes
from zkdata.config_changes import ConfigChange

EXPIRATION_MS = 15 * 60 * 1000


def _change(sequence: int, ctime_ms: int) -> ConfigChange:
    return ConfigChange(f"config_change_{sequence:010d}", sequence, ctime_ms, ("topics", "t"))


def test_notifications_older_than_the_expiration_before_the_newest_are_purged() -> None:
    newest = 1_000_000_000
    changes = [
        _change(1, newest - EXPIRATION_MS - 1),
        _change(2, newest - EXPIRATION_MS),
        _change(3, newest - EXPIRATION_MS + 1),
        _change(4, newest),
    ]
    assert obsolete_changes(changes, EXPIRATION_MS) == [
        "config_change_0000000001",
        "config_change_0000000002",
    ]


def test_a_lone_notification_stays_however_old_it_looks() -> None:
    """No broker clock is read: one notification stamped a day ago, by ZooKeeper's clock,
    stays until a newer one comes, whatever the broker's wall clock says."""
    assert obsolete_changes([_change(1, 0)], EXPIRATION_MS) == []
    assert obsolete_changes([], EXPIRATION_MS) == []
