"""The PySpark report's Spark job over synthetic chaos runs against a plain Spark read of the
same files (`python -m bench.pipeline`, `spark_job`; no ZooKeeper, no broker). The runs come
from `synthetic`, a seeded generator of run directories with the mix of records a real
cluster and workload write; `options` declares the benchmark's command line. Main thread;
Spark runs its own threads and Python workers.
"""
