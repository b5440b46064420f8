"""`python -m bench.pipeline [options]` (`make bench-pipeline`): the PySpark report's Spark
job over synthetic runs against a plain Spark read (`bench.pipeline.spark_job`). Main
thread."""

from __future__ import annotations

import sys

from bench.pipeline.spark_job import main

if __name__ == "__main__":
    sys.exit(main())
