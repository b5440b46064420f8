"""Unit tier: hypothesis settings profiles, chosen by `HYPOTHESIS_PROFILE`.

- `ci` (the default, `make test` and `make test-unit`): derandomized, so every run draws
  the same examples and a failure reproduces; hypothesis's default number of examples unless
  a test sets its own; no deadline (the machine is shared).
- `long` (`make fuzz`): random draws, `FUZZ_EXAMPLES` examples (default 5,000) for every
  test marked `fuzz` that leaves the number to the profile.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, deadline=None)
settings.register_profile(
    "long",
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "5000")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
