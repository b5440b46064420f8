"""The `/admin/preferred_replica_election` request znode: read and remove (epoch-fenced),
for the active controller. Blocks the calling thread (the controller event thread)."""

from __future__ import annotations

from kazoo.exceptions import NoNodeError

from domain import TopicPartition
from zkdata import paths
from zkdata.admin_znodes import PreferredReplicaElectionZNode
from zkdata.client import KafkaZkClient, WatchCallback
from zkdata.errors import ZnodeFormatError
from zkdata.fenced_writes import Delete, FencedWriter


def read_preferred_replica_election(
    zk: KafkaZkClient, watch: WatchCallback
) -> tuple[TopicPartition, ...] | None:
    """The partitions requested (None when there is no request), re-arming the watch.
    Raises `ZnodeFormatError` when the request does not decode."""
    if not zk.watch_exists(paths.PREFERRED_REPLICA_ELECTION, watch):
        return None
    try:
        data, _ = zk.kazoo.retry(zk.kazoo.get, paths.PREFERRED_REPLICA_ELECTION)
    except NoNodeError:
        return None
    try:
        return PreferredReplicaElectionZNode.decode(data)
    except ZnodeFormatError as exc:
        raise ZnodeFormatError(exc.reason, paths.PREFERRED_REPLICA_ELECTION) from None


def delete_preferred_replica_election(zk: KafkaZkClient, epoch_zk_version: int) -> None:
    """Remove the handled (or malformed) request, fenced by the controller epoch."""
    FencedWriter(zk.kazoo).write([Delete(paths.PREFERRED_REPLICA_ELECTION)], epoch_zk_version)
