"""Synthetic chaos run directories at scale for the pipeline benchmark: `runs` writes run
directories (docs/runs.md) until they hold a number of records, each a cluster as its nodes
log it (`cluster`: `SimCluster`) under the faults of its scenario (`faults`), with the
workload's histories, snapshots and the chaos engine's verdict. Seeded; the calling thread.
"""

from __future__ import annotations

from bench.pipeline.synthetic.runs import SCENARIOS, Generated, write_runs

__all__ = ["SCENARIOS", "Generated", "write_runs"]
