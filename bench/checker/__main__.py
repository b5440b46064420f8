"""`python -m bench.checker [options]` (`make bench-checker`): the history checker over a
generated history of a million operations against a plain decode of the same lines
(`bench.checker.measure`). Main thread."""

from __future__ import annotations

import sys

from bench.checker.measure import main

if __name__ == "__main__":
    sys.exit(main())
