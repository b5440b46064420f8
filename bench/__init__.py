"""Benchmarks of the testbed against floors measured on the same machine, in the same run.

`python -m bench all` (`make bench`) runs every measure at scale in one run and prints one
table; `python -m bench.failover` times the first election and failovers alone;
`python -m bench.produce` measures acks=all and acks=1 produce throughput against the gRPC
round-trip floor (Metadata RPCs); `python -m bench.pipeline` times the PySpark report's
jobs over synthetic chaos runs against a plain Spark read of the same files (no
ZooKeeper). `python -m bench <benchmark>` runs any cluster benchmark (`benchmarks`).

The benchmarks come in families, one subpackage each:

- `control`: the control plane at scale, the suite of `make bench` (`suite`) with
  failover, broker failure, controlled shutdown and topic creation, their stages,
  synthetic clusters and floors.
- `produce`: the data plane, produce throughput against Metadata RPCs.
- `pipeline`: the PySpark report against a plain read, and the generator of the synthetic
  runs it reads (`pipeline.synthetic`).
- `shared`: what every family uses: the settings and the shared command-line options,
  the runner, the broker fleet, the report, its table and results, the machine, CPU
  usage, flame graphs, progress lines.

The benchmarks run on the cluster harness (`harness`: `ZkEnsemble`, `BrokerProcess`,
`wait_until`) that the tests use. Everything runs on the main thread, except the produce
benchmark's client threads (`produce.rpc_load`) and Spark's own threads and workers.
"""

from __future__ import annotations
