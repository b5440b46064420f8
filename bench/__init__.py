"""Benchmarks of the testbed against floors measured on the same machine, in the same run.

`python -m bench.failover` times controller failover for many partitions against a real
3-server ZooKeeper ensemble and broker processes; `python -m bench.produce` measures
acks=all and acks=1 produce throughput against the gRPC round-trip floor (Metadata RPCs).
`python -m bench <benchmark>` runs either. `python -m bench.pipeline` times the PySpark
report's jobs over synthetic chaos runs against a plain Spark read of the same files (no
ZooKeeper; `pipeline`). Modules, one concept each:

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

Failover: `layout` (the synthetic cluster; pure), `populate` (multi-op transactions),
`floor` (pipelined reads and fenced writes, timed), `rounds` (first election, then kill -9
of the controller), `timeline` (where a failover's time went, from the event logs),
`failover` (its measures and rows).

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
