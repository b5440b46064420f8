"""The choices a generator draws a fault from: for each fault kind, the target roles it
picks among and the values of each param (`FAULT_DRAWS`), shared by `random_mix` and the
generic generator (`chaos.generator.generic`). Every role and value here is one the
registry accepts (`chaos.faults.registry`). Pure values; any thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from chaos.errors import ScheduleError
from chaos.faults.params import Scalar
from chaos.faults.registry import fault_type

__all__ = ["FAULT_DRAWS", "ONE_BROKER", "kind_pool"]

#: The roles that name one broker.
ONE_BROKER = ("controller", "non-controller", "busiest-leader", "random-broker")
#: For each kind: the roles a generator picks from, and the choices for each param.
FAULT_DRAWS: Mapping[str, tuple[tuple[str, ...], Mapping[str, tuple[Scalar, ...]]]] = {
    "kill": (ONE_BROKER, {}),
    "stop": (ONE_BROKER, {}),
    "pause": (ONE_BROKER, {}),
    "bounce": (ONE_BROKER, {}),
    "zk-leader-kill": (("zk-leader",), {}),
    "zk-pause": (("zk-follower", "zk-leader"), {}),
    "partition": (("all",), {"grudge": ("isolate", "majorities-ring", "bridge")}),
    "zk-isolate": (ONE_BROKER, {}),
    "zk-deaf": (ONE_BROKER, {}),
    "zk-lost-reply": (ONE_BROKER, {"hold_s": (1.5, 2.5), "window_s": (0, 6)}),
    "zk-reset": (ONE_BROKER, {}),
    "broker-isolate": (ONE_BROKER, {}),
    "session-expire": (ONE_BROKER, {}),
    "loss": ((*ONE_BROKER, "all-brokers"), {"percent": (10, 20, 30)}),
    "bandwidth": ((*ONE_BROKER, "all-brokers"), {"rate_kbit": (128, 256, 512)}),
    "latency": ((*ONE_BROKER, "all-brokers"), {"delay_ms": (50, 100, 200)}),
    "request": (
        ("non-controller", "random-broker"),
        # armed is in effect: whether a request comes while it lasts is the cluster's doing
        {
            "action": ("drop", "delay", "duplicate", "reorder"),
            "count": (1, 3),
            "effect": ("armed",),
        },
    ),
    "cpu-starve": (ONE_BROKER, {"percent": (2, 5, 10)}),
    "memory-squeeze": (ONE_BROKER, {"limit_mb": (48, 64, 96)}),
    "clock": (
        (*ONE_BROKER, "all-brokers", "zk-follower", "zk-leader"),
        {
            "action": ("bump", "strobe", "rate"),
            "offset_ms": (-3_600_000, -60_000, 60_000, 3_600_000),
            "period_ms": (1000, 2000),
            "factor": (0.5, 2.0),
        },
    ),
    # the brokers never fsync and mostly read from the page cache: writes are what they do
    "disk-eio": (ONE_BROKER, {"op": ("write",), "probability": (0.1, 1.0)}),
    "disk-slow": (ONE_BROKER, {"op": ("any", "write"), "delay_ms": (20, 100, 500)}),
    "disk-full": (ONE_BROKER, {"budget_bytes": (0, 65536)}),
    "disk-volatile": (ONE_BROKER, {}),
    # drawn when asked for: it fails to start unless a disk-volatile lasts over it
    "power-loss": (ONE_BROKER, {}),
    # drawn when asked for: it restarts every server three times and replaces the
    # repository's certificates
    "cert-rotation": (("all",), {}),
}


def kind_pool(seed: object, kinds: Sequence[str], generator: str) -> tuple[str, ...]:
    """`kinds` without repeats, in their order, once `seed` is an integer and every kind a
    known one; `ScheduleError` (naming the `generator`) else."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ScheduleError(f"seed must be an integer, got {seed!r}")
    pool = tuple(dict.fromkeys(kinds))
    if not pool:
        raise ScheduleError(f"{generator} needs at least one kind")
    for kind in pool:
        fault_type(kind)
    return pool
