"""Benchmarks of the controller against floors measured on the same machine, in the same run.

`python -m bench.failover` times controller failover for many partitions against a real
3-server ZooKeeper ensemble and broker processes. Modules, one concept each:

- `config`: the command line and the frozen settings of a run.
- `layout`: the synthetic cluster (topics, assignments, partition states); pure.
- `populate`: writes a layout into ZooKeeper in multi-op transactions.
- `floor`: what a failover must do at minimum (pipelined reads, fenced writes), timed.
- `fleet`: the broker processes and their event logs, waited on with deadlines.
- `timeline`: where a failover's time went, read back from the event logs.
- `report`: the printed table and `bench.json`.
- `failover`: the command line and the run itself.

The benchmark reuses the integration tier's harness (`tests/support`: `ZkEnsemble`,
`BrokerProcess`, `wait_until`). That directory is not a package on the default import
path, so importing `bench` puts it there; everything runs on the main thread.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: `tests/`, which holds the `support` harness package.
TESTS_DIR = Path(__file__).resolve().parents[1] / "tests"

if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))
