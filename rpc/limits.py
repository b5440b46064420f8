"""The testbed's deliberate size limits on the wire (docs/security.md, "Limits and
validation"). Constants only; any thread.

Two kinds of limit:

- bytes: `MAX_MESSAGE_BYTES` is the hard cap gRPC enforces on every message a server or a
  channel sends or receives (`rpc.wire.options`); `CONTROL_REQUEST_MAX_BYTES` is what the
  controller splits its LeaderAndIsr, UpdateMetadata and StopReplica requests under
  (`controller.request_split`), measured with `rpc.sizes`;
- counts: how many entries one list of a request may hold. The broker answers a request
  over a bound with INVALID_REQUEST before it touches any state
  (`broker_node.request_validation`).
"""

from __future__ import annotations

#: gRPC's own default cap (4 MiB). A 100,000-partition LeaderAndIsr with short topic names
#: encodes to about 3.4 MB, so larger clusters or longer names cross it.
GRPC_DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024

#: The controller splits each control request into parts that encode to at most this many
#: bytes: gRPC's default, so a part fits even a peer that kept gRPC's defaults.
CONTROL_REQUEST_MAX_BYTES = GRPC_DEFAULT_MAX_MESSAGE_BYTES

#: The cap on every message sent or received, on every server and channel. It must hold
#: the largest data-plane message: a Produce batch (the produce benchmark keeps batches
#: to half of it) and a Fetch answer (up to 1 MiB of records per partition). Above it a
#: call fails with RESOURCE_EXHAUSTED before any handler runs, so a peer cannot make a
#: broker buffer more than this per call.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024

#: Partition entries in one request (LeaderAndIsr, UpdateMetadata, StopReplica, Fetch,
#: OffsetsForLeaderEpoch, ElectLeaders): five times the 100,000 partitions the testbed is
#: measured with.
MAX_PARTITIONS_PER_REQUEST = 500_000
#: Broker ids in one replica, ISR, adding, removing or offline list.
MAX_REPLICAS_PER_PARTITION = 1_000
#: Live brokers in an UpdateMetadata, live leaders in a LeaderAndIsr.
MAX_BROKERS_PER_REQUEST = 10_000
#: Endpoints of one live broker.
MAX_ENDPOINTS_PER_BROKER = 32
#: Topics named in one Metadata request.
MAX_TOPICS_PER_METADATA_REQUEST = 100_000
#: Records in one Produce request.
MAX_RECORDS_PER_PRODUCE = 1_000_000
#: `max_records` of one Fetch partition.
MAX_RECORDS_PER_FETCH_PARTITION = 1_000_000
#: Host names in endpoints and live leaders (DNS allows 253 characters).
MAX_HOST_LENGTH = 255
#: A request's timeout or wait (`timeout_ms`, `max_wait_ms`): at most 5 minutes.
MAX_TIMEOUT_MS = 300_000
