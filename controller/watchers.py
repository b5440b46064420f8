"""`Watchers`: the ZooKeeper watch callbacks of the controller, one per event value.

kazoo keeps a set of callbacks per path, so re-arming a watch with the same callback never
doubles the events. The callbacks run on kazoo's thread and only enqueue; after a
suspension (which drops kazoo's watches) they enqueue too, so that the handler re-arms and
catches up. Building a callback: the controller event thread; calling one: kazoo's thread.
"""

from __future__ import annotations

from collections.abc import Callable

from kazoo.protocol.states import EventType, KeeperState, WatchedEvent

from controller import events as ev


class Watchers:
    """One watch callback per distinct event value for the broker's whole life."""

    def __init__(self, enqueue: Callable[[ev.ControllerEvent], None]) -> None:
        self._enqueue = enqueue
        self._callbacks: dict[ev.ControllerEvent, Callable[[WatchedEvent], None]] = {}
        self._reading: dict[ev.ControllerEvent, Callable[[WatchedEvent], None]] = {}

    @property
    def enqueue(self) -> Callable[[ev.ControllerEvent], None]:
        """The event queue's `put`, for callbacks that are not watches (any thread)."""
        return self._enqueue

    def __call__(self, event: ev.ControllerEvent) -> Callable[[WatchedEvent], None]:
        """The callback that enqueues `event` (one per distinct event value, so a
        partition's watch and another partition's are different callbacks)."""
        if event not in self._callbacks:

            def on_watch(watched: WatchedEvent) -> None:
                if watched.type != EventType.NONE or watched.state == KeeperState.CONNECTING:
                    self._enqueue(event)

            self._callbacks[event] = on_watch
        return self._callbacks[event]

    def reading(
        self, event: ev.ControllerEvent, read: Callable[[], ev.ControllerEvent]
    ) -> Callable[[WatchedEvent], None]:
        """The callback that, when its watch fires, enqueues what `read` builds then, on
        kazoo's thread (bug switch `kafka-3085`: the event carries the state of that
        moment); after a suspension it enqueues `event` itself, as nothing can be read.
        One per distinct `event`, apart from the callbacks of `__call__`."""
        if event not in self._reading:

            def on_watch(watched: WatchedEvent) -> None:
                if watched.type != EventType.NONE:
                    self._enqueue(read())
                elif watched.state == KeeperState.CONNECTING:
                    self._enqueue(event)

            self._reading[event] = on_watch
        return self._reading[event]


def controller_watch_events(
    watched: WatchedEvent, resign_on_suspension: bool = False
) -> tuple[ev.ControllerEvent, ...]:
    """What the `/controller` watch enqueues for `watched` (pure; kazoo's thread).

    A deletion: Reelect. A creation or a change: ControllerChange. kazoo drops every
    watch when the connection is suspended (it tells each watcher with an event of type
    NONE) and does not restore them when the same session comes back, so a suspension
    also enqueues ControllerChange, which re-arms the watch and re-checks the controller
    once connected. After an expiry (NONE in a closed state) nothing: the session
    listener's Expire / RegisterBrokerAndReelect take over. With `resign_on_suspension`
    (bug switch `kafka-13407`) a suspension ends the term (Expire) and re-runs the
    election once connected (Reelect), as Kafka's controller did after a ZooKeeper
    leader restart.
    """
    suspended = watched.type == EventType.NONE and watched.state == KeeperState.CONNECTING
    if suspended and resign_on_suspension:
        return (ev.Expire("its ZooKeeper connection was lost"), ev.Reelect())
    if watched.type == EventType.DELETED:
        return (ev.Reelect(),)
    if suspended or watched.type in (EventType.CREATED, EventType.CHANGED):
        return (ev.ControllerChange(),)
    return ()
