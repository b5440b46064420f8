"""ZooKeeper access in Kafka's terms, over a kazoo session (Kafka's `KafkaZkClient`).

Callers never touch kazoo paths or JSON: they ask for brokers, the controller, epochs.
Reads of many znodes are pipelined (kazoo `*_async`); atomic writes use `transaction()`.
Methods block the calling thread; watch callbacks run on kazoo's event thread and must
only hand work off (enqueue), never block.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError
from kazoo.protocol.states import WatchedEvent, ZnodeStat

from zkdata import paths
from zkdata.errors import BrokerIdInUseError, ControllerMovedError, ZnodeFormatError
from zkdata.model import Broker, BrokerInfo, ControllerRegistration
from zkdata.znodes import BrokerIdZNode, ControllerEpochZNode, ControllerZNode

#: The epoch written when `/controller_epoch` is first created (Kafka's `InitialControllerEpoch`).
INITIAL_CONTROLLER_EPOCH = 0
#: Its zkVersion at creation (`InitialControllerEpochZkVersion`).
INITIAL_CONTROLLER_EPOCH_ZK_VERSION = 0

WatchCallback = Callable[[WatchedEvent], None]


@dataclass(frozen=True, slots=True)
class ControllerEpoch:
    """The value of `/controller_epoch` and the zkVersion that fences later writes."""

    epoch: int
    zk_version: int


@dataclass(frozen=True, slots=True)
class BrokerListing:
    """Every registration under `/brokers/ids`, with the ones that failed to decode."""

    brokers: dict[int, Broker]
    malformed: dict[str, ZnodeFormatError]


def now_ms() -> int:
    """Wall-clock milliseconds, as Kafka stamps its znodes."""
    return int(time.time() * 1000)


class KafkaZkClient:
    """Domain operations on one kazoo session (the caller owns starting and stopping it)."""

    def __init__(self, kazoo: KazooClient) -> None:
        self._zk = kazoo

    @property
    def kazoo(self) -> KazooClient:
        """The underlying session (for state listeners)."""
        return self._zk

    @property
    def session_id(self) -> int | None:
        """The current session id, or None before the first connection."""
        client_id = self._zk.client_id
        return int(client_id[0]) if client_id else None

    # -- set-up --------------------------------------------------------------------------

    def create_persistent_paths(self) -> None:
        """Create Kafka's top-level persistent znodes if they are missing."""
        for path in paths.PERSISTENT_PATHS:
            self._zk.retry(self._zk.ensure_path, path)

    # -- brokers -------------------------------------------------------------------------

    def register_broker(self, info: BrokerInfo) -> int:
        """Create the ephemeral `/brokers/ids/N` and return the broker epoch (its czxid).

        A node that already exists and is owned by this very session counts as success (the
        response of an earlier attempt was lost). Owned by another session:
        `BrokerIdInUseError`.
        """
        path = BrokerIdZNode.path(info.id)
        data = BrokerIdZNode.encode(info)
        with contextlib.suppress(NodeExistsError):
            self._zk.retry(self._zk.create, path, data, ephemeral=True, makepath=True)
        try:
            _, stat = self._zk.retry(self._zk.get, path)
        except NoNodeError:
            raise BrokerIdInUseError(f"{path} vanished right after it was created") from None
        if stat.ephemeralOwner != self.session_id:
            raise BrokerIdInUseError(
                f"broker id {info.id} is registered by another session "
                f"(0x{stat.ephemeralOwner:x}); is another broker running with this id?"
            )
        return int(stat.czxid)

    def get_broker(self, broker_id: int) -> Broker | None:
        """One registration with its epoch, or None if not registered."""
        try:
            data, stat = self._zk.retry(self._zk.get, BrokerIdZNode.path(broker_id))
        except NoNodeError:
            return None
        return Broker(BrokerIdZNode.decode(broker_id, data), int(stat.czxid))

    def get_all_brokers(self) -> BrokerListing:
        """All registrations, read pipelined; malformed ones are reported, not raised."""
        children = self._zk.retry(self._zk.get_children, paths.BROKER_IDS)
        pending = [(name, self._zk.get_async(paths.broker_id_child(name))) for name in children]
        brokers: dict[int, Broker] = {}
        malformed: dict[str, ZnodeFormatError] = {}
        for name, result in pending:
            try:
                data, stat = result.get()
            except NoNodeError:
                continue  # went away between the listing and the read
            if not name.isdigit():
                malformed[name] = ZnodeFormatError("broker id is not an integer", name)
                continue
            try:
                info = BrokerIdZNode.decode(int(name), data)
            except ZnodeFormatError as exc:
                malformed[name] = ZnodeFormatError(exc.reason, paths.broker_id_child(name))
                continue
            brokers[info.id] = Broker(info, int(stat.czxid))
        return BrokerListing(brokers, malformed)

    # -- controller ----------------------------------------------------------------------

    def get_controller(self) -> tuple[ControllerRegistration, ZnodeStat] | None:
        """The content and Stat of `/controller`, or None when there is no controller.

        Raises `ZnodeFormatError` when the node exists but does not decode.
        """
        try:
            data, stat = self._zk.retry(self._zk.get, paths.CONTROLLER)
        except NoNodeError:
            return None
        try:
            return ControllerZNode.decode(data), stat
        except ZnodeFormatError as exc:
            raise ZnodeFormatError(exc.reason, paths.CONTROLLER) from None

    def get_controller_id(self) -> int | None:
        """The active controller's broker id, or None."""
        found = self.get_controller()
        return found[0].broker_id if found else None

    def get_controller_epoch(self) -> ControllerEpoch | None:
        """`/controller_epoch` and its zkVersion, or None if never written."""
        try:
            data, stat = self._zk.retry(self._zk.get, paths.CONTROLLER_EPOCH)
        except NoNodeError:
            return None
        try:
            return ControllerEpoch(ControllerEpochZNode.decode(data), int(stat.version))
        except ZnodeFormatError as exc:
            raise ZnodeFormatError(exc.reason, paths.CONTROLLER_EPOCH) from None

    def _current_or_initial_epoch(self) -> ControllerEpoch:
        current = self.get_controller_epoch()
        if current is not None:
            return current
        try:
            self._zk.retry(
                self._zk.create,
                paths.CONTROLLER_EPOCH,
                ControllerEpochZNode.encode(INITIAL_CONTROLLER_EPOCH),
            )
            return ControllerEpoch(INITIAL_CONTROLLER_EPOCH, INITIAL_CONTROLLER_EPOCH_ZK_VERSION)
        except NodeExistsError:
            raced = self.get_controller_epoch()
            if raced is None:
                raise ControllerMovedError("/controller_epoch vanished during election") from None
            return raced

    def register_controller_and_increment_epoch(self, controller_id: int) -> ControllerEpoch:
        """Try to become controller: one multi creating the ephemeral `/controller` and
        setting `/controller_epoch` to epoch+1 at the version just read.

        Returns the new epoch and its zkVersion. `NodeExists`/`BadVersion` mean someone else
        won, unless `/controller` is ours at exactly the new epoch (our own earlier attempt
        succeeded but its response was lost). Otherwise raises `ControllerMovedError`.
        """
        current = self._current_or_initial_epoch()
        new_epoch = current.epoch + 1
        registration = ControllerRegistration(controller_id, now_ms())

        def attempt() -> list[Any]:
            tx = self._zk.transaction()
            tx.create(paths.CONTROLLER, ControllerZNode.encode(registration), ephemeral=True)
            tx.set_data(
                paths.CONTROLLER_EPOCH,
                ControllerEpochZNode.encode(new_epoch),
                version=current.zk_version,
            )
            return list(tx.commit())

        results = self._zk.retry(attempt)
        if isinstance(results[0], NodeExistsError | BadVersionError) or isinstance(
            results[1], NodeExistsError | BadVersionError
        ):
            return self._check_controller_and_epoch(controller_id, new_epoch)
        for result in results:
            if isinstance(result, Exception):
                raise result
        stat = results[1]
        return ControllerEpoch(new_epoch, int(stat.version))

    def _check_controller_and_epoch(self, controller_id: int, new_epoch: int) -> ControllerEpoch:
        found = self.get_controller()
        if found is None:
            raise ControllerMovedError("no controller after a failed election attempt")
        registration, stat = found
        if registration.broker_id == controller_id and stat.ephemeralOwner == self.session_id:
            epoch = self.get_controller_epoch()
            if epoch is not None and epoch.epoch == new_epoch:
                return epoch
        raise ControllerMovedError(
            f"controller is broker {registration.broker_id}; aborting the election of "
            f"broker {controller_id}"
        )

    # -- watches -------------------------------------------------------------------------

    def watch_exists(self, path: str, callback: WatchCallback) -> bool:
        """Arm a one-shot exists-watch on `path`; return whether the node exists now."""
        return self._zk.retry(self._zk.exists, path, watch=callback) is not None
