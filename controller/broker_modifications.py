"""`BrokerModifications`: a known broker rewrote its registration (Kafka 2.8's
`BrokerModificationsHandler` and `processBrokerModification`). Event thread only, apart
from the watch callbacks, which only enqueue (kazoo's thread).

Each `/brokers/ids/N` the controller knows carries an exists-watch that enqueues
`BrokerModifications(N)` when the znode's data changes (or it goes away, or the connection
was suspended: the handler then catches up). The handler arms the watch again while the
broker is known, reads the registration and, when its endpoints differ from the ones in
the context, takes the new ones (keeping the broker epoch) and sends UpdateMetadata to
every live broker, so each metadata cache shows them. A registration replaced by a new
session (another czxid) is a bounce, BrokerChange's to handle; a vanished one is a death,
likewise. As in Kafka, the controller's channel to the broker keeps the address it was
opened with.
"""

from __future__ import annotations

from collections.abc import Iterable

from controller import events as ev
from controller.context import ControllerContext
from controller.request_batch import SendUpdateMetadata
from controller.watchers import Watchers
from eventlog import BrokerModified, EventLog
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.errors import ZnodeFormatError
from zkdata.model import Broker


def _addresses(broker: Broker) -> list[str]:
    return [e.connection_string() for e in broker.info.endpoints]


class BrokerModificationHandler:
    """The data watches on the known brokers' registrations and what their changes do."""

    def __init__(
        self,
        context: ControllerContext,
        zk: KafkaZkClient,
        watchers: Watchers,
        event_log: EventLog,
        send_update_metadata: SendUpdateMetadata,
    ) -> None:
        self._ctx = context
        self._zk = zk
        self._watchers = watchers
        self._events = event_log
        self._send_update_metadata = send_update_metadata

    def watch(self, broker_ids: Iterable[int]) -> None:
        """Arm the data watch of each broker's `/brokers/ids/N` (at failover for every live
        broker; on BrokerChange for new and bounced ones)."""
        for broker_id in broker_ids:
            self._zk.watch_exists(
                paths.broker_id(broker_id), self._watchers(ev.BrokerModifications(broker_id))
            )

    def process(self, broker_id: int) -> None:
        """The registration of `broker_id` changed: re-arm its watch while the broker is
        known; if it is the same registration with other endpoints, take them and tell
        every live broker."""
        known = self._ctx.live_broker(broker_id)
        if known is None:
            return  # dead or never known: BrokerChange's business
        self.watch([broker_id])
        try:
            registered = self._zk.get_broker(broker_id)
        except ZnodeFormatError:
            return  # BrokerChange reports a malformed registration when it reads the list
        if registered is None or registered.epoch != known.epoch:
            return  # gone or replaced by another session: a death or a bounce
        if registered.info.endpoints == known.info.endpoints:
            return
        self._ctx.add_live_brokers([Broker(registered.info, known.epoch)])
        self._events.emit(
            BrokerModified(
                broker_id=broker_id,
                broker_epoch=known.epoch,
                endpoints=_addresses(registered),
                previous=_addresses(known),
            ),
        )
        self._send_update_metadata(self._ctx.live_or_shutting_down_broker_ids(), [])
