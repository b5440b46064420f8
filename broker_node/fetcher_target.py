"""What a replica fetcher sees of the replica it keeps in step (`FetcherTarget`, with its
log as `FollowerLog`) and of the leader it fetches from (`LeaderClient`). `Partition` and
`ClientApiClient` satisfy them; the fetcher imports neither (an import contract). Called on
the `replica-fetcher-<leader id>` threads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rpc import messages as m


class FollowerLog(Protocol):
    """What a fetcher reads of a follower's log (`PartitionLog`)."""

    @property
    def log_end_offset(self) -> int:
        """The next offset to fetch."""
        ...

    @property
    def high_watermark(self) -> int:
        """Where to truncate when the leader cannot name an epoch end."""
        ...

    def latest_epoch(self) -> int:
        """The latest leader epoch in the log (`UNDEFINED_EPOCH` when it has none)."""
        ...

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(largest epoch <= `epoch`, where it ends) in this log."""
        ...


class FetcherTarget(Protocol):
    """A follower replica as its fetcher sees it (`Partition`): the leader epoch it was told,
    a read view of its log, and the two writes the fetcher makes."""

    @property
    def leader_epoch(self) -> int:
        """The leader epoch of the last LeaderAndIsr applied."""
        ...

    @property
    def log(self) -> FollowerLog:
        """The replica's log, read without the replica's lock."""
        ...

    def truncate_to(self, offset: int) -> int:
        """Drop the divergent tail; returns the records removed."""
        ...

    def append_as_follower(self, records: Sequence[m.FetchedRecord], leader_hw: int) -> None:
        """Append what the leader sent and follow its high watermark."""
        ...

    def append_encoded_as_follower(self, data: bytes, leader_hw: int) -> None:
        """Append records sent as the leader's log stores them; follow its high watermark."""
        ...


class LeaderClient(Protocol):
    """The leader's data-plane service as a fetcher calls it (`ClientApiClient`)."""

    def offsets_for_leader_epoch(
        self, request: m.OffsetsForLeaderEpochRequest
    ) -> m.OffsetsForLeaderEpochResponse:
        """KIP-101: where the asked epochs ended in the leader's log."""
        ...

    def fetch(self, request: m.FetchRequest) -> m.FetchResponse:
        """Read partitions from the leader."""
        ...

    def close(self) -> None:
        """Close the connection; calls in flight raise `RpcClosed`."""
        ...
