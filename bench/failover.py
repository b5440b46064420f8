"""`python -m bench.failover [options]`: the first election and failovers after kill -9
alone (`bench.control.failover`), as `python -m bench failover`. Main thread."""

from __future__ import annotations

import sys

from bench.control.failover import BENCHMARK
from bench.shared.runner import main

if __name__ == "__main__":
    sys.exit(main(BENCHMARK))
