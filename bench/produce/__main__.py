"""`python -m bench.produce [options]` (`make bench-produce`): acks=all and acks=1 produce
throughput against the gRPC round-trip floor (`bench.produce.throughput`), as
`python -m bench produce`. Main thread."""

from __future__ import annotations

import sys

from bench.produce.throughput import BENCHMARK
from bench.shared.runner import main

if __name__ == "__main__":
    sys.exit(main(BENCHMARK))
