"""`FakeRegistrationsZk`: `/brokers/ids` for unit tests of the controller (STYLE rule 13):
the registrations with their broker epochs and the one-shot exists-watches armed on
each `/brokers/ids/N`. `rewrite` changes a registration's data as a live broker does
(same session, same epoch) and fires the watches of its znode; `replace` registers it
again from a new session (a new epoch); `remove` lets it vanish.

Not thread-safe: only the thread that plays the controller event thread may use it.
"""

from __future__ import annotations

from dataclasses import replace as with_fields

from kazoo.protocol.states import EventType, KeeperState, WatchedEvent

from domain import EndPoint
from zkdata import paths
from zkdata.client import WatchCallback
from zkdata.model import Broker

__all__ = ["FakeRegistrationsZk"]


class FakeRegistrationsZk:
    """Registrations by broker id, and the exists-watches armed on them by path."""

    def __init__(self, brokers: list[Broker]) -> None:
        self.brokers = {b.id: b for b in brokers}
        self.watches: dict[str, list[WatchCallback]] = {}

    def watch_exists(self, path: str, callback: WatchCallback) -> bool:
        """Arm a one-shot watch (the same callback twice is one watch, as in kazoo)."""
        armed = self.watches.setdefault(path, [])
        if callback not in armed:
            armed.append(callback)
        return any(paths.broker_id(b) == path for b in self.brokers)

    def get_broker(self, broker_id: int) -> Broker | None:
        """The registration, or None."""
        return self.brokers.get(broker_id)

    def armed(self, broker_id: int) -> int:
        """How many watches wait on `/brokers/ids/<broker_id>`."""
        return len(self.watches.get(paths.broker_id(broker_id), []))

    def rewrite(self, broker_id: int, endpoints: tuple[EndPoint, ...]) -> None:
        """The live broker writes new endpoints into its registration (same epoch)."""
        broker = self.brokers[broker_id]
        self.brokers[broker_id] = Broker(
            with_fields(broker.info, endpoints=endpoints), broker.epoch
        )
        self._fire(broker_id, EventType.CHANGED)

    def replace(self, broker: Broker) -> None:
        """The broker registered again from another session (a new epoch)."""
        self.brokers[broker.id] = broker
        self._fire(broker.id, EventType.CREATED)

    def remove(self, broker_id: int) -> None:
        """The registration vanished."""
        del self.brokers[broker_id]
        self._fire(broker_id, EventType.DELETED)

    def _fire(self, broker_id: int, kind: EventType) -> None:
        path = paths.broker_id(broker_id)
        for callback in self.watches.pop(path, []):
            callback(WatchedEvent(kind, KeeperState.CONNECTED, path))
