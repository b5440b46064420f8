"""`AlterIsrManager`: how partition leaders' ISR changes reach the controller at
inter.broker.protocol.version 2.7 (KIP-497), as Kafka 2.8's `DefaultAlterIsrManager`.

A leader submits one `AlterIsrItem` per partition; a second one for the same partition is
refused while the first is unsent or in flight (the leader keeps one proposal pending).
The `alter-isr-sender` thread sends every unsent item in one AlterIsr, one request at a
time; each partition's answer goes to its item's callback, which settles the leader's
proposal. A request-level error (NOT_CONTROLLER, STALE_BROKER_EPOCH...) or a transport
failure leaves the items unsent, and the request is sent again after `RETRY_BACKOFF_S`,
to whichever broker is controller by then. `clear_pending` drops an unsent item (a
LeaderAndIsr replaced the leader's state).

`ControllerSender` sends to the controller that the broker's metadata cache names (Kafka's
`MetadataCacheControllerNodeProvider`), over a channel kept while the controller stays.

Thread-safety: `submit` and `clear_pending` may be called from any thread (with a
partition's lock held); callbacks run on `alter-isr-sender`, with no lock of this module
held.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from broker_node.config import BrokerConfig
from broker_node.metadata_cache import MetadataSnapshot
from domain import LeaderAndIsr, TopicPartition
from domain.protocols import uses_alter_isr
from rpc import messages as m
from rpc.errors import Errors, RpcError
from rpc.wire import BrokerControlClient, ChannelIdentity

log = logging.getLogger(__name__)

#: Kafka's fixed 50 ms before a failed AlterIsr is sent again.
RETRY_BACKOFF_S = 0.05

#: Sends one AlterIsr to the controller; raises `RpcError` when it could not be delivered.
SendAlterIsr = Callable[[m.AlterIsrRequest], m.AlterIsrResponse]


@dataclass(frozen=True, slots=True, eq=False)
class AlterIsrItem:
    """One partition's proposed state (the leader's id and epoch, the new ISR, the zkVersion
    it last saw) and who hears the controller's answer for it."""

    tp: TopicPartition
    leader_and_isr: LeaderAndIsr
    callback: Callable[[m.AlterIsrPartitionResult], None]

    def to_request(self) -> m.AlterIsrPartition:
        """The partition's entry in an AlterIsr."""
        state = self.leader_and_isr
        return m.AlterIsrPartition(self.tp, state.leader_epoch, state.isr, state.zk_version)


class AlterIsrManager:
    """Batches partition leaders' ISR proposals into AlterIsr requests, one in flight."""

    def __init__(
        self,
        broker_id: int,
        broker_epoch: Callable[[], int],
        send: SendAlterIsr,
        retry_backoff_s: float = RETRY_BACKOFF_S,
    ) -> None:
        self._broker_id = broker_id
        self._broker_epoch = broker_epoch
        self._send = send
        self._backoff_s = retry_backoff_s
        self._cond = threading.Condition()
        self._unsent: dict[TopicPartition, AlterIsrItem] = {}
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="alter-isr-sender", daemon=True)

    def start(self) -> None:
        """Start `alter-isr-sender`."""
        self._thread.start()

    def stop(self) -> None:
        """Stop sending after the request in flight; wait up to 5 s for the thread."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(5)

    def submit(self, item: AlterIsrItem) -> bool:
        """Queue `item`; False (and nothing queued) when one for its partition is already
        unsent or in flight."""
        with self._cond:
            if item.tp in self._unsent:
                return False
            self._unsent[item.tp] = item
            self._cond.notify_all()
            return True

    def clear_pending(self, tp: TopicPartition) -> None:
        """Forget the partition's item (its answer, if in flight, is then ignored by the
        leader, whose proposal was replaced)."""
        with self._cond:
            self._unsent.pop(tp, None)

    def pending(self) -> list[TopicPartition]:
        """Partitions with an item unsent or in flight."""
        with self._cond:
            return sorted(self._unsent)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._unsent and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                batch = list(self._unsent.values())
            if not self.send_once(batch):
                with self._cond:
                    self._cond.wait_for(lambda: self._stopped, self._backoff_s)

    def send_once(self, batch: list[AlterIsrItem]) -> bool:
        """Send `batch` in one AlterIsr and hand each answered partition to its item's
        callback (`alter-isr-sender`); False when the request must be sent again."""
        request = m.AlterIsrRequest(
            self._broker_id, self._broker_epoch(), tuple(item.to_request() for item in batch)
        )
        try:
            response = self._send(request)
        except RpcError as exc:
            log.info("AlterIsr not delivered, sending again: %s", exc)
            return False
        if response.error is not Errors.NONE:
            log.info("AlterIsr refused with %s, sending again", response.error.name)
            return False
        answers = {r.topic_partition: r for r in response.partitions}
        for item in batch:
            answer = answers.get(item.tp)
            if answer is None:
                log.warning("AlterIsr answer names no result for %s", item.tp)
                continue
            with self._cond:
                if self._unsent.get(item.tp) is item:
                    del self._unsent[item.tp]
            item.callback(answer)
        return True


class ControllerSender:
    """Sends AlterIsr to the controller `controller()` names as `host:port` (None: none
    known yet, answered NOT_CONTROLLER), over one channel kept while it stays the same.
    Called on `alter-isr-sender` only."""

    def __init__(
        self,
        controller: Callable[[], str | None],
        tls: ChannelIdentity | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        self._controller = controller
        self._tls = tls
        self._timeout_s = timeout_s
        self._client: BrokerControlClient | None = None

    def __call__(self, request: m.AlterIsrRequest) -> m.AlterIsrResponse:
        """Send `request`; raises `RpcError` on transport failure."""
        address = self._controller()
        if address is None:
            return m.AlterIsrResponse(Errors.NOT_CONTROLLER)
        if self._client is None or self._client.target != address:
            self.close()
            self._client = BrokerControlClient(address, self._timeout_s, self._tls)
        return self._client.alter_isr(request)

    def close(self) -> None:
        """Close the channel, if any."""
        if self._client is not None:
            self._client.close()
            self._client = None


def controller_address(snapshot: MetadataSnapshot | None) -> str | None:
    """`host:port` of the controller `snapshot` names, if it lists it among the live
    brokers."""
    if snapshot is None:
        return None
    broker = snapshot.live_brokers.get(snapshot.controller_id)
    if broker is None or not broker.endpoints:
        return None
    endpoint = broker.endpoints[0]
    return f"{endpoint.host}:{endpoint.port}"


def started_alter_isr(
    config: BrokerConfig,
    broker_epoch: Callable[[], int],
    metadata: Callable[[], MetadataSnapshot | None],
    tls: ChannelIdentity | None,
) -> AlterIsrManager | None:
    """The broker's AlterIsr manager, started, sending to the controller its metadata cache
    names; None when the broker's inter-broker protocol has leaders write their ISR
    themselves."""
    if not uses_alter_isr(config.inter_broker_protocol):
        return None
    sender = ControllerSender(lambda: controller_address(metadata()), tls)
    manager = AlterIsrManager(config.broker_id, broker_epoch, sender)
    manager.start()
    return manager
