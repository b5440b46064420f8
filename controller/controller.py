"""`KafkaController`: every broker builds one; only the elected one is active.

Election (docs/fencing.md): read `/controller_epoch`, then one multi creating the ephemeral
`/controller` and bumping the epoch at the version read. A watch on `/controller` re-runs
the election when it is deleted and resigns when it moved elsewhere. Session expiry
resigns; the next session re-registers the broker (new broker epoch) and runs again.

Threads: public methods may be called from any thread and only enqueue events; `process`
and everything it calls run on `controller-event-thread`, which owns the context; the
ControlledShutdown, ElectLeaders and AlterIsr calls are answered there by `controller.calls`.

Bug switches (docs/bugs.md): `kafka-13407` resigns on a lost connection and stops the
election at a `/controller` naming this broker; `kafka-2437` resigns only on a deletion;
`kafka-4229` keeps the term a session expiry ended, and the next failover fails on it.
The events of an active controller's duties go to `controller.active_events`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from kazoo.protocol.states import WatchedEvent

from bugs.catalog import NO_RESIGN_ON_DATA_CHANGE, OWN_ZNODE_NO_FAILOVER, STALE_TERM_STATE
from controller import events as ev
from controller.active import ActiveController
from controller.active_events import dispatch_to_active
from controller.calls import answer_alter_isr, answer_controlled_shutdown, answer_elect_leaders
from controller.channel_manager import BrokerChannel, grpc_channel
from controller.config import ControllerConfig
from controller.context import ControllerContext
from controller.event_manager import ControllerEventManager
from controller.metrics import ControllerMetrics
from controller.partition_state_machine import ElectionStats
from controller.watchers import Watchers, controller_watch_events
from controller.zk_outcomes import committed_event, failure
from eventlog import (
    ControllerElected,
    ControllerObserved,
    ControllerResigned,
    EventFailed,
    EventLog,
    MalformedZnode,
)
from rpc.errors import Errors
from rpc.messages import (
    AlterIsrRequest,
    AlterIsrResponse,
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
)
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.errors import ControllerMovedError, ZnodeFormatError
from zkdata.fenced_writes import Committed
from zkdata.model import Broker

log = logging.getLogger(__name__)

R = TypeVar("R")

#: `activeControllerId` when no controller is known.
NO_CONTROLLER = -1


class KafkaController:
    """The controller of one broker; active only while it holds `/controller`."""

    def __init__(
        self,
        broker_id: int,
        zk: KafkaZkClient,
        event_log: EventLog,
        register_broker: Callable[[], int],
        config: ControllerConfig | None = None,
        connect: Callable[[Broker], BrokerChannel] = grpc_channel,
    ) -> None:
        self.broker_id = broker_id
        self._zk = zk
        self._events = event_log
        self._register_broker = register_broker
        self._config = config or ControllerConfig()
        self._connect = connect
        self.context = ControllerContext()
        self._active_controller_id = NO_CONTROLLER
        self.active: ActiveController | None = None
        self.metrics = ControllerMetrics()
        self.event_manager = ControllerEventManager(self, self.metrics.record_queue_time)
        self._watchers = Watchers(self.event_manager.put)
        self._term_left: int | None = None  # kafka-4229: the epoch a session expiry ended

    # -- any thread ------------------------------------------------------------------------

    @property
    def is_active(self) -> bool:
        """True while this broker is the controller."""
        return self._active_controller_id == self.broker_id

    @property
    def active_controller_id(self) -> int:
        """The controller as last observed, or -1."""
        return self._active_controller_id

    def writes_committed(self, committed: Committed) -> None:
        """Log a multi of fenced writes that committed (the thread that wrote: the event
        thread; `zkdata.fenced_writes.observe_commits`)."""
        self._events.emit(committed_event(self.broker_id, self.context.epoch, committed))

    def startup(self) -> None:
        """Start the event thread and join the election."""
        self.event_manager.start()
        self.event_manager.put(ev.Startup())

    def on_session_expired(self) -> None:
        """The session is gone: preempt queued work and resign (kazoo's thread)."""
        self.event_manager.clear_and_put(ev.Expire())

    def on_topic_config_change(self, topic: str) -> None:
        """A topic's config overrides changed (the config-change listener's thread)."""
        self.event_manager.put(ev.TopicConfigChange(topic))

    def on_session_suspended(self) -> None:
        """The connection to ZooKeeper is lost, the session may still live: stop acting
        until it is back or expires (kazoo's thread)."""
        self.event_manager.pause()

    def on_session_connected(self) -> None:
        """Connected to ZooKeeper (again): act again (kazoo's thread)."""
        self.event_manager.resume()

    def on_new_session(self) -> None:
        """A new session replaced an expired one: re-register and re-elect."""
        self.event_manager.put(ev.RegisterBrokerAndReelect())

    def _ask(
        self,
        make: Callable[[Callable[[R], None]], ev.ControllerEvent],
        refuse: Callable[[Errors], R],
        timeout_s: float,
    ) -> R:
        """Put the event `make(reply)` builds and wait up to `timeout_s` for its answer (a
        gRPC thread); `refuse(NOT_CONTROLLER)` while inactive, `refuse(REQUEST_TIMED_OUT)`
        when the wait runs out."""
        if not self.is_active:
            return refuse(Errors.NOT_CONTROLLER)
        done = threading.Event()
        answer: list[R] = []

        def reply(response: R) -> None:
            answer.append(response)
            done.set()

        self.event_manager.put(make(reply))
        if not done.wait(timeout_s):
            return refuse(Errors.REQUEST_TIMED_OUT)
        return answer[0]

    def controlled_shutdown(
        self, request: ControlledShutdownRequest, timeout_s: float = 30.0
    ) -> ControlledShutdownResponse:
        """Answer a broker's ControlledShutdown (called on a gRPC thread; waits for the
        event thread)."""
        return self._ask(
            lambda reply: ev.ControlledShutdown(request.broker_id, request.broker_epoch, reply),
            ControlledShutdownResponse,
            timeout_s,
        )

    def elect_leaders(
        self, request: ElectLeadersRequest, default_timeout_s: float = 60.0
    ) -> ElectLeadersResponse:
        """Answer ElectLeaders (a gRPC thread; waits for the event thread up to the
        request's `timeout_ms`, or `default_timeout_s` when it gives none)."""
        timeout_s = request.timeout_ms / 1000 if request.timeout_ms > 0 else default_timeout_s
        return self._ask(
            lambda reply: ev.ElectLeaders(request.election_type, request.partitions, reply),
            ElectLeadersResponse,
            timeout_s,
        )

    def alter_isr(self, request: AlterIsrRequest, timeout_s: float = 30.0) -> AlterIsrResponse:
        """Answer a partition leader's AlterIsr (a gRPC thread; waits for the event
        thread)."""
        return self._ask(
            lambda reply: ev.AlterIsrReceived(request, reply), AlterIsrResponse, timeout_s
        )

    def shutdown(self) -> None:
        """Stop the event thread and resign (the broker is stopping)."""
        self.event_manager.shutdown()
        if self.is_active:
            self._on_resignation("the broker is stopping")
        self._active_controller_id = NO_CONTROLLER

    # -- event thread ----------------------------------------------------------------------

    def process(self, event: ev.ControllerEvent) -> None:
        """Dispatch one event (event thread), timed for its controller state. A failed
        epoch check anywhere resigns."""
        started = time.monotonic()
        try:
            self._dispatch(event)
        except ControllerMovedError as exc:
            self._controller_moved(exc)
        finally:
            self.metrics.record_event(event.state, time.monotonic() - started)
            active = self.active if self.is_active else None
            halted = active.deletion.ineligible_topics() if active is not None else ()
            self.metrics.publish(self.is_active, self.context, halted)

    def _dispatch(self, event: ev.ControllerEvent) -> None:
        active = self.active
        match event:
            case ev.Startup():
                self._watch_controller()
                self._elect()
            case ev.ControllerChange():
                self._maybe_resign(not self._config.bug_switches.on(NO_RESIGN_ON_DATA_CHANGE))
                if self._active_controller_id == NO_CONTROLLER:
                    self._elect()  # it vanished before the watch was armed again
            case ev.Reelect():
                self._maybe_resign()
                self._elect()
            case ev.Expire():
                self._process_expire(event.reason)
            case ev.RegisterBrokerAndReelect():
                self._register_broker()
                self._maybe_resign()
                self._elect()
            case ev.ElectLeaders():
                answer_elect_leaders(active if self.is_active else None, event)
            case ev.AlterIsrReceived():
                answer_alter_isr(active if self.is_active else None, event)
            case ev.ControlledShutdown():
                answer_controlled_shutdown(active if self.is_active else None, self._events, event)
            case _ if active is not None:
                dispatch_to_active(active, event)

    def on_process_error(
        self, event: ev.ControllerEvent, error: BaseException, may_retry: bool = False
    ) -> bool:
        """Record a failed event; True when it is to be handled again (`may_retry`, it
        decides from ZooKeeper and lost the connection: Kafka's client would have retried
        the request until connected); else answer its caller if it has one (event
        thread)."""
        failed, retry = failure(event, error, may_retry)
        self._events.emit(failed)
        if not retry:
            event.preempt()
        return retry

    def _on_controller_znode(self, watched: WatchedEvent) -> None:
        """Watch on `/controller` (kazoo's event thread): only enqueue what
        `controller_watch_events` says."""
        resign = self._config.bug_switches.on(OWN_ZNODE_NO_FAILOVER)
        for event in controller_watch_events(watched, resign):
            self.event_manager.put(event)

    def _watch_controller(self) -> None:
        self._zk.watch_exists(paths.CONTROLLER, self._on_controller_znode)

    def _read_controller_id(self) -> int:
        try:
            found = self._zk.get_controller_id()
        except ZnodeFormatError as exc:
            self._events.emit(MalformedZnode(path=exc.path, reason=exc.reason))
            return NO_CONTROLLER
        return NO_CONTROLLER if found is None else found

    def _elect(self, attempts: int = 3) -> None:
        """Run for controller unless one is known or this broker is no candidate. A lost
        race (NodeExists / BadVersion) whose winner is already gone again is retried from
        the read of the epoch. A `/controller` naming this broker while no controller runs
        here is given up if this session holds it, so that a real election follows
        (KAFKA-13407; with `kafka-13407` the election stops there, and nothing runs)."""
        stop_at_own = self._config.bug_switches.on(OWN_ZNODE_NO_FAILOVER)
        for _ in range(attempts):
            self._active_controller_id = self._read_controller_id()
            if self.is_active and self.active is None and not stop_at_own:
                self._zk.delete_controller_if_owned()
                self._active_controller_id = self._read_controller_id()
            if self._active_controller_id != NO_CONTROLLER:
                self._events.emit(ControllerObserved(controller_id=self._active_controller_id))
                return
            if not self._config.candidate:
                return  # the watch on /controller stays armed: it observes the next one
            try:
                epoch = self._zk.register_controller_and_increment_epoch(self.broker_id)
                break
            except ControllerMovedError as exc:
                log.info("broker %d lost the controller election: %s", self.broker_id, exc)
                self._watch_controller()
            except ZnodeFormatError as exc:
                self._events.emit(MalformedZnode(path=exc.path, reason=exc.reason))
                return
        else:
            return
        self.context.epoch = epoch.epoch
        self.context.epoch_zk_version = epoch.zk_version
        self._active_controller_id = self.broker_id
        self._events.emit(
            ControllerElected(
                controller_id=self.broker_id,
                controller_epoch=epoch.epoch,
                epoch_zk_version=epoch.zk_version,
                epoch_zxid=epoch.zxid,
            ),
        )
        self._on_controller_failover()

    def _maybe_resign(self, resign: bool = True) -> None:
        """Re-read `/controller`; resign if it names another broker, unless not `resign`."""
        was_active = self.is_active
        self._watch_controller()
        self._active_controller_id = self._read_controller_id()
        if was_active and not self.is_active and resign:
            holder = self._active_controller_id
            self._on_resignation(
                "/controller is gone"
                if holder == NO_CONTROLLER
                else f"/controller names broker {holder}"
            )
        if not self.is_active and self._active_controller_id != NO_CONTROLLER:
            self._events.emit(ControllerObserved(controller_id=self._active_controller_id))

    def _process_expire(self, reason: str) -> None:
        was_active = self.is_active
        self._active_controller_id = NO_CONTROLLER
        if was_active:
            if self._config.bug_switches.on(STALE_TERM_STATE):
                self._term_left = self.context.epoch
            self._on_resignation(reason)

    def _on_controller_failover(self) -> None:
        """Become the active controller: load the cluster and start the state machines."""
        if self._term_left is not None:  # kafka-4229: holds /controller, acts on nothing
            error = f"ControllerStateError: the state of epoch {self._term_left} is loaded"
            self._events.emit(EventFailed(event="ControllerFailover", error=error))
            return
        self.active = ActiveController(
            self.broker_id,
            self.context,
            self._zk,
            self._events,
            self._watchers,
            self._config,
            self._connect,
            ElectionStats(on_unclean=self.metrics.record_unclean),
        )
        try:
            self.active.on_failover()
        except ControllerMovedError:
            raise
        except Exception as exc:  # half-loaded: give the controllership up, as Kafka does
            log.exception("broker %d: controller failover failed", self.broker_id)
            self._events.emit(
                EventFailed(event="ControllerFailover", error=f"{type(exc).__name__}: {exc}"),
            )
            self._active_controller_id = NO_CONTROLLER
            self._on_resignation(f"failover failed: {type(exc).__name__}: {exc}")
            self._zk.delete_controller_if_owned()

    def _on_resignation(self, reason: str) -> None:
        """Tear down everything `_on_controller_failover` set up (unless it lingers on);
        `reason` goes into the event."""
        if self.active is not None and self.active.on_resignation():
            self.active = None
        self._events.emit(
            ControllerResigned(
                controller_id=self.broker_id, controller_epoch=self.context.epoch, reason=reason
            ),
        )
        if self.active is None:
            self.context.reset()

    def _controller_moved(self, error: ControllerMovedError) -> None:
        """An epoch-fenced write failed: another controller was elected. Resign at once and
        give up `/controller` if this session still holds it, so a proper election runs."""
        log.warning("broker %d: controller moved: %s", self.broker_id, error)
        was_active = self.is_active
        self._active_controller_id = NO_CONTROLLER
        if was_active:
            self._on_resignation(f"an epoch-fenced write failed: {error}")
        self._zk.delete_controller_if_owned()
        self._maybe_resign()
