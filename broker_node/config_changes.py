"""`ConfigChangeListener`: the broker's side of dynamic topic configs, as Kafka 2.x's
`DynamicConfigManager` runs it (a `ZkNodeChangeNotificationListener` on `/config/changes`
with a `TopicConfigHandler`).

A child watch on `/config/changes` wakes the thread `config-change-listener`, which lists
the notifications, handles those numbered above the last one it handled, in sequence
order, and purges those older than the expiration, measured back from the newest one's
ZooKeeper `ctime` (`obsolete_changes`; every broker purges; a notification already gone
is fine). A topic notification re-reads `/config/topics/T` and hands the
overrides on (`on_topic_change`: the replica manager and the controller). At start-up every
notification present is handled, as Kafka does. The thread also wakes every
`recheck_s`, so a watch lost with an expired session is armed again.

Threads: the watch callback runs on kazoo's thread and only sets an event; everything
else runs on `config-change-listener`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from kazoo.exceptions import KazooException
from kazoo.protocol.states import WatchedEvent

from eventlog import EventLog, MalformedZnode, TopicConfigChanged
from zkdata.config_changes import CHANGE_EXPIRATION_MS, ConfigChange, ConfigChangesZk

log = logging.getLogger(__name__)

THREAD_NAME = "config-change-listener"


def obsolete_changes(changes: Sequence[ConfigChange], expiration_ms: int) -> list[str]:
    """The notifications to purge: those created `expiration_ms` or more before the newest.
    Every `ctime` is stamped by ZooKeeper, so the age is measured on one clock; Kafka
    measures it against the broker's own wall clock, and a broker whose clock ran an hour
    ahead would purge notifications the other brokers have not handled yet."""
    newest = max((c.ctime_ms for c in changes), default=0)
    return [c.child for c in changes if c.ctime_ms <= newest - expiration_ms]


class ConfigChangeListener:
    """Follows `/config/changes` for one broker."""

    def __init__(
        self,
        changes: ConfigChangesZk,
        read_topic_config: Callable[[str], dict[str, str]],
        on_topic_change: Callable[[str, dict[str, str]], None],
        event_log: EventLog,
        expiration_ms: int = CHANGE_EXPIRATION_MS,
        recheck_s: float = 30.0,
    ) -> None:
        self._changes = changes
        self._read_topic_config = read_topic_config
        self._on_topic_change = on_topic_change
        self._events = event_log
        self._expiration_ms = expiration_ms
        self._recheck_s = recheck_s
        self.last_handled = -1
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)

    def start(self) -> None:
        """Handle what is there and follow new notifications."""
        self._wake.set()
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for it (any other thread)."""
        self._stopped.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def _on_watch(self, _event: WatchedEvent) -> None:
        self._wake.set()

    def _run(self) -> None:
        while not self._stopped.is_set():
            self._wake.wait(self._recheck_s)
            if self._stopped.is_set():
                return
            self._wake.clear()
            try:
                self.process()
            except KazooException as exc:  # no session now: the next wake tries again
                log.warning("config change notifications not processed: %r", exc)
            except Exception:  # the listener never dies of one notification
                log.exception("config change notifications failed")

    def process(self) -> None:
        """One pass: arm the watch, handle new notifications in order, purge old ones
        (the listener's thread; tests call it directly)."""
        children = self._changes.list_changes(self._on_watch)
        changes = self._changes.read_changes(children)
        for change in changes:
            if change.sequence <= self.last_handled:
                continue
            if change.error is not None:
                self._events.emit(
                    MalformedZnode(path=change.error.path, reason=change.error.reason)
                )
            elif change.entity is not None and change.entity[0] == "topics":
                topic = change.entity[1]
                overrides = self._read_topic_config(topic)
                self._on_topic_change(topic, overrides)
                self._events.emit(
                    TopicConfigChanged(
                        topic=topic,
                        config=dict(sorted(overrides.items())),
                        notification=change.child,
                    ),
                )
            self.last_handled = change.sequence
        obsolete = obsolete_changes(changes, self._expiration_ms)
        if obsolete:
            self._changes.delete_changes(obsolete)
