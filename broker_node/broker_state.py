"""`BrokerState`: where a broker is in its life, with Kafka's values, and
`BrokerStateTracker`, which holds it for the `kafka_server_KafkaServer_BrokerState` gauge.

The node's main thread moves the state (`broker_node.node`: NotRunning -> Starting ->
RunningAsBroker -> PendingControlledShutdown -> BrokerShuttingDown -> NotRunning); the
metrics endpoint's thread reads it. A running broker that is the active controller reports
RunningAsController (4), as the seeds' Kafka sets it when the controller fails over and
resets it when it resigns; here it is derived from the controller when read, so it can
never disagree with `ActiveControllerCount`. One lock guards the state.
"""

from __future__ import annotations

import threading
from enum import IntEnum


class BrokerState(IntEnum):
    """Kafka's broker states, as its BrokerState gauge reports them."""

    NOT_RUNNING = 0
    STARTING = 1
    RECOVERING_FROM_UNCLEAN_SHUTDOWN = 2
    RUNNING_AS_BROKER = 3
    RUNNING_AS_CONTROLLER = 4
    PENDING_CONTROLLED_SHUTDOWN = 6
    BROKER_SHUTTING_DOWN = 7


#: The moves a broker's life makes; anything else is a programming error.
_NEXT: dict[BrokerState, frozenset[BrokerState]] = {
    BrokerState.NOT_RUNNING: frozenset({BrokerState.STARTING}),
    BrokerState.STARTING: frozenset(
        {
            BrokerState.RECOVERING_FROM_UNCLEAN_SHUTDOWN,
            BrokerState.RUNNING_AS_BROKER,
            BrokerState.BROKER_SHUTTING_DOWN,
        }
    ),
    BrokerState.RECOVERING_FROM_UNCLEAN_SHUTDOWN: frozenset(
        {BrokerState.RUNNING_AS_BROKER, BrokerState.BROKER_SHUTTING_DOWN}
    ),
    BrokerState.RUNNING_AS_BROKER: frozenset(
        {BrokerState.PENDING_CONTROLLED_SHUTDOWN, BrokerState.BROKER_SHUTTING_DOWN}
    ),
    BrokerState.PENDING_CONTROLLED_SHUTDOWN: frozenset({BrokerState.BROKER_SHUTTING_DOWN}),
    BrokerState.BROKER_SHUTTING_DOWN: frozenset({BrokerState.NOT_RUNNING}),
}


class BrokerStateTracker:
    """The broker's state: moved by the main thread, read by any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = BrokerState.NOT_RUNNING

    @property
    def state(self) -> BrokerState:
        """The state the broker's life is in (never RunningAsController: see `reported`)."""
        with self._lock:
            return self._state

    def become(self, state: BrokerState) -> None:
        """Move to `state`; ValueError for a move Kafka's broker never makes (staying in
        the same state is allowed: a second stop is a no-op)."""
        with self._lock:
            if state is not self._state and state not in _NEXT[self._state]:
                raise ValueError(f"a broker does not go from {self._state.name} to {state.name}")
            self._state = state

    def reported(self, controller_active: bool) -> BrokerState:
        """The gauge's value: RunningAsController for a running broker whose controller is
        active, the state otherwise."""
        state = self.state
        if state is BrokerState.RUNNING_AS_BROKER and controller_active:
            return BrokerState.RUNNING_AS_CONTROLLER
        return state
