"""Benchmarks of the testbed against floors measured on the same machine, in the same run.

`python -m bench.failover` times controller failover for many partitions against a real
3-server ZooKeeper ensemble and broker processes; `python -m bench.produce` measures
acks=all and acks=1 produce throughput against the gRPC round-trip floor (Metadata RPCs).
Modules, one concept each:

- `config`: the command line and the frozen settings of a run.
- `layout`: the synthetic cluster (topics, assignments, partition states); pure.
- `populate`: writes a layout into ZooKeeper in multi-op transactions.
- `floor`: what a failover must do at minimum (pipelined reads, fenced writes), timed.
- `fleet`: the broker processes and their event logs, waited on with deadlines.
- `timeline`: where a failover's time went, read back from the event logs.
- `report`: the printed table and `bench.json`.
- `failover`: the command line and the run itself.
- `machine`: the machine, revision and load a run happened on (both benchmarks).
- `produce_config`: the produce benchmark's command line and settings.
- `cluster_ready`: deadline-bounded waits until brokers and a topic's ISRs are complete.
- `rpc_load`: timed load from client threads (latencies, errors, progress); Metadata ops.
- `producers`: leader lookup, one channel per broker, batches sent with retries.
- `usage`: CPU per process and for the box, and broker events, during a phase.
- `produce_report`: the produce benchmark's table, ratios and `bench.json`.
- `produce`: the produce benchmark's run.

The benchmarks run on the cluster harness (`harness`: `ZkEnsemble`, `BrokerProcess`,
`wait_until`) that the tests use. Everything runs on the main thread, except the produce
benchmark's client threads (`rpc_load`).
"""

from __future__ import annotations
