"""Benchmarks of the testbed against floors measured on the same machine, in the same run.

`python -m bench all` (`make bench`) runs every measure at scale in one run and prints one
table (`suite`); `python -m bench.failover` times the first election and failovers alone;
`python -m bench.produce` measures acks=all and acks=1 produce throughput against the gRPC
round-trip floor (Metadata RPCs); `python -m bench.pipeline` times the PySpark report's
jobs over synthetic chaos runs against a plain Spark read of the same files (no ZooKeeper;
`pipeline`). `python -m bench <benchmark>` runs any. Modules, one concept each:

Shared by every benchmark:

- `settings`: `Settings`, the one frozen settings type, with each benchmark's options.
- `arguments`: the command line, parsed once into `Settings`.
- `runner`: sets up the ensemble and the broker fleet, runs a benchmark's measures,
  tears down whatever happens, writes the results.
- `report`: measures as rows (figure, floor, ratio), the table, `bench.json` and the
  JSON lines in `bench/results/` (format in its README).
- `machine`: the machine (no host name), revision and load a run happened on.
- `fleet`: the broker processes and their event logs, waited on with deadlines.
- `console`: progress lines for long phases.

The suite: `stage` (a fresh chroot with its own broker fleet; settle, restart, preferred
election, profiling), `applied` (when a change was applied on every broker, from the event
logs), `broker_failure`, `controlled_shutdown`, `topic_creation` (one measure each),
`profiling` (py-spy flame graphs), `plot` (each cost against partition count).

Failover: `layout` (the synthetic cluster; pure), `populate` (multi-op transactions),
`floor` (pipelined reads, fenced writes and a gRPC round trip, timed), `rounds` (first
election, then kill -9 of the controller), `timeline` (where a failover's time went, from
the event logs), `failover` (its measures and rows).

Produce: `cluster_ready` (waits until brokers and a topic's ISRs are complete),
`rpc_load` (timed load from client threads; Metadata ops), `producers` (batches through
`client.Client`), `usage` (CPU per process and for the box, events during a phase),
`phases` (a measured phase, CPU per operation, the notes), `produce` (its measures and
rows).

The benchmarks run on the cluster harness (`harness`: `ZkEnsemble`, `BrokerProcess`,
`wait_until`) that the tests use. Everything runs on the main thread, except the produce
benchmark's client threads (`rpc_load`).
"""

from __future__ import annotations
