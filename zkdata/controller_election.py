"""ZooKeeper operations of controller election, in Kafka's terms: reading `/controller` and
`/controller_epoch`, registering as controller while incrementing the epoch in one multi
(Kafka's `registerControllerAndIncrementControllerEpoch`), recognising a win whose response
was lost, and resigning (`deleteController` when this session holds it).

`KafkaZkClient` offers these as its own methods; this module holds them so that the client
keeps one concept per module. Every method blocks the calling thread: the controller's
event thread, or a tool's main thread for the reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError
from kazoo.protocol.states import ZnodeStat

from zkdata import paths
from zkdata.errors import ControllerMovedError, ZnodeFormatError
from zkdata.model import ControllerRegistration
from zkdata.znodes import ControllerEpochZNode, ControllerZNode

#: The epoch written when `/controller_epoch` is first created (Kafka's `InitialControllerEpoch`).
INITIAL_CONTROLLER_EPOCH = 0
#: Its zkVersion at creation (`InitialControllerEpochZkVersion`).
INITIAL_CONTROLLER_EPOCH_ZK_VERSION = 0


@dataclass(frozen=True, slots=True)
class ControllerEpoch:
    """The value of `/controller_epoch`, the zkVersion that fences later writes, and the
    zxid at which that value was written (its mzxid; None where it was not read from a
    Stat, as when the node was just created with the initial epoch)."""

    epoch: int
    zk_version: int
    zxid: int | None = None


class ControllerElectionZk:
    """`/controller` and `/controller_epoch` on one kazoo session; `session_id` answers the
    session's current id (None before the first connection)."""

    def __init__(self, kazoo: KazooClient, session_id: Callable[[], int | None]) -> None:
        self._zk = kazoo
        self._session_id = session_id

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

    def get_controller_epoch(self) -> ControllerEpoch | None:
        """`/controller_epoch` and its zkVersion, or None if never written."""
        try:
            data, stat = self._zk.retry(self._zk.get, paths.CONTROLLER_EPOCH)
        except NoNodeError:
            return None
        try:
            return ControllerEpoch(
                ControllerEpochZNode.decode(data), int(stat.version), int(stat.mzxid)
            )
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

    def register_controller_and_increment_epoch(
        self, registration: ControllerRegistration
    ) -> ControllerEpoch:
        """Try to become controller: one multi creating the ephemeral `/controller` (with
        `registration`) and setting `/controller_epoch` to epoch+1 at the version just read.

        Returns the new epoch and its zkVersion. `NodeExists`/`BadVersion` mean someone else
        won, unless `/controller` is ours at exactly the new epoch (our own earlier attempt
        succeeded but its response was lost). Otherwise raises `ControllerMovedError`.
        """
        current = self._current_or_initial_epoch()
        new_epoch = current.epoch + 1

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
            return self._check_controller_and_epoch(registration.broker_id, new_epoch)
        for result in results:
            if isinstance(result, Exception):
                raise result
        stat = results[1]
        return ControllerEpoch(new_epoch, int(stat.version), int(stat.mzxid))

    def _check_controller_and_epoch(self, controller_id: int, new_epoch: int) -> ControllerEpoch:
        found = self.get_controller()
        if found is None:
            raise ControllerMovedError("no controller after a failed election attempt")
        registration, stat = found
        if registration.broker_id == controller_id and stat.ephemeralOwner == self._session_id():
            epoch = self.get_controller_epoch()
            if epoch is not None and epoch.epoch == new_epoch:
                return epoch
        raise ControllerMovedError(
            f"controller is broker {registration.broker_id}; aborting the election of "
            f"broker {controller_id}"
        )

    def delete_controller_if_owned(self) -> None:
        """Remove `/controller` if this session holds it (after a failed epoch check)."""
        try:
            _, stat = self._zk.retry(self._zk.get, paths.CONTROLLER)
            if stat.ephemeralOwner == self._session_id():
                self._zk.retry(self._zk.delete, paths.CONTROLLER, version=stat.version)
        except (NoNodeError, BadVersionError):
            pass
