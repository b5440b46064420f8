"""`BrokerRegistration`: the broker's ephemeral `/brokers/ids/N` and its broker epoch.

`register()` runs on the main thread at start-up and on the controller event thread after
a session expiry; `epoch` may be read from any thread.

Bug switch `kafka-7165` (docs/bugs.md): a re-registration after a session expiry that
meets an existing `/brokers/ids/N` gives up at once, without asking whose session holds
it, and raises: the broker stays alive and unregistered.
"""

from __future__ import annotations

import logging
import threading
import time

from bugs import NO_BUGS, BugSwitches
from bugs.catalog import REGISTRATION_GIVES_UP
from domain import UNKNOWN_BROKER_EPOCH, EndPoint
from eventlog import BrokerRegistered, EventLog
from zkdata.client import KafkaZkClient, now_ms
from zkdata.errors import BrokerIdInUseError
from zkdata.model import BrokerInfo

log = logging.getLogger(__name__)


class BrokerRegistration:
    """Registers broker `broker_id` at `host:port` (on `rack`, when it has one); remembers
    the latest broker epoch."""

    def __init__(
        self,
        zk: KafkaZkClient,
        broker_id: int,
        host: str,
        port: int,
        event_log: EventLog,
        wait_for_stale_s: float,
        rack: str | None = None,
        security_protocol: str = "PLAINTEXT",
        bug_switches: BugSwitches = NO_BUGS,
    ) -> None:
        """`security_protocol` names the listener as Kafka does: `SSL` for mutual TLS."""
        self._zk = zk
        self._protocol = security_protocol
        self.broker_id = broker_id
        self._host = host
        self._port = port
        self._rack = rack
        self._events = event_log
        self._wait_for_stale_s = wait_for_stale_s
        self._lock = threading.Lock()
        self._epoch = UNKNOWN_BROKER_EPOCH
        self._count = 0
        self._gives_up = bug_switches.on(REGISTRATION_GIVES_UP)

    @property
    def epoch(self) -> int:
        """The broker epoch (czxid of the registration), -1 before the first registration."""
        with self._lock:
            return self._epoch

    def register(self) -> int:
        """Create the registration and return the new broker epoch.

        A node this session already owns counts as created. If another session holds the
        id (this broker was killed and restarted before ZooKeeper expired its old session),
        retry for up to `wait_for_stale_s` for that node to go away, then raise
        `BrokerIdInUseError`; with 0, Kafka's behaviour, raise at once. With `kafka-7165`,
        a re-registration raises at the first existing node, whoever owns it.
        """
        info = BrokerInfo(
            id=self.broker_id,
            endpoints=(EndPoint(self._host, self._port, self._protocol, self._protocol),),
            rack=self._rack,
            timestamp_ms=now_ms(),
        )
        with self._lock:
            gives_up = self._gives_up and self._count > 0
        deadline = time.monotonic() + (0.0 if gives_up else self._wait_for_stale_s)
        waited = False
        while True:
            try:
                epoch = self._zk.register_broker(info, check_owner=not gives_up)
                break
            except BrokerIdInUseError as exc:
                if time.monotonic() >= deadline:
                    raise
                if not waited:
                    log.warning("%s; retrying for up to %.1f s", exc, self._wait_for_stale_s)
                    waited = True
                time.sleep(0.25)  # backoff while the stale session expires server-side
        with self._lock:
            previous = self._epoch
            self._epoch = epoch
            self._count += 1
            count = self._count
        self._events.emit(
            BrokerRegistered(
                broker_id=self.broker_id,
                broker_epoch=epoch,
                previous_broker_epoch=previous,
                reregistration=count > 1,
                session_id=f"0x{self._zk.session_id or 0:x}",
            ),
        )
        return epoch
