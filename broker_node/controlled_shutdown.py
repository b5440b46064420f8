"""The broker's side of controlled shutdown: how often a stopping broker asks the
controller to move its leaderships, and how long it waits between attempts (Kafka 2.8's
`KafkaServer.controlledShutdown`). Main thread (the one that stops the broker).

At most `controlled.shutdown.max.retries` attempts in all; every attempt that does not
end in `done` is followed by `controlled.shutdown.retry.backoff.ms` of waiting, the last
one included, as Kafka sleeps before it looks at the retries left. With no attempt left
the broker shuts down uncleanly.
"""

from __future__ import annotations

from collections.abc import Callable

from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import BrokerControlClient
from security.tls_files import TlsIdentity
from zkdata.client import KafkaZkClient

#: How long one ControlledShutdown request may take (Kafka's `controller.socket.timeout.ms`,
#: 30 s): moving thousands of leaderships takes the controller seconds, and a request that
#: timed out is only asked again, after the backoff, for the same work.
CONTROLLED_SHUTDOWN_TIMEOUT_S = 30.0

#: The outcome of an attempt after which nothing is left to move.
DONE = "done"


def ask_until_done(
    max_retries: int,
    backoff_s: float,
    ask: Callable[[], str],
    record: Callable[[int, str], None],
    wait: Callable[[float], object],
) -> bool:
    """Call `ask` (one attempt, returning its outcome) up to `max_retries` times until it
    returns `DONE`; `record(attempt, outcome)` after each, `wait(backoff_s)` after each
    that failed. True once an attempt was `DONE`."""
    for attempt in range(1, max_retries + 1):
        outcome = ask()
        record(attempt, outcome)
        if outcome == DONE:
            return True
        wait(backoff_s)
    return False


def ask_controller(
    zk: KafkaZkClient, broker_id: int, broker_epoch: int, tls: TlsIdentity | None
) -> str:
    """One attempt: read `/controller` and the controller's registration, send it
    ControlledShutdown and name the outcome (`DONE`, an error's name, the count of
    partitions still led, "no controller", or "failed: <exception>" when ZooKeeper or the
    controller could not be reached)."""
    try:
        controller_id = zk.get_controller_id()
        broker = zk.get_broker(controller_id) if controller_id is not None else None
        if broker is None:
            return "no controller"
        endpoint = broker.info.endpoint
        address = f"{endpoint.host}:{endpoint.port}"
        with BrokerControlClient(
            address, timeout_s=CONTROLLED_SHUTDOWN_TIMEOUT_S, tls=tls
        ) as client:
            reply = client.controlled_shutdown(m.ControlledShutdownRequest(broker_id, broker_epoch))
    except Exception as exc:  # ZooKeeper or the controller unreachable: try again
        return f"failed: {type(exc).__name__}"
    if reply.error is not Errors.NONE:
        return reply.error.name
    if reply.remaining_partitions:
        return f"{len(reply.remaining_partitions)} partitions still led"
    return DONE
