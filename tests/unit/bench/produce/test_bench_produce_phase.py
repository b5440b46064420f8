"""One produce phase of `bench.produce`: its load runs inside the profiling context it is
given, and the flame graphs that context yields are kept for the notes. No broker runs:
the load is a function that succeeds at once."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, cast

from bench.produce.rpc_load import OpResult
from bench.produce.throughput import _measure
from bench.shared.profiling import Profiles
from bench.shared.runner import Cluster
from bench.shared.usage import CpuMeter
from harness.zk_endpoint import ZkEndpoint


class _Fleet:
    broker_ids = [1]

    def __init__(self, directory: Path) -> None:
        self._directory = directory

    def check_alive(self) -> bool:
        return True

    def event_log(self, broker_id: int) -> Path:
        return self._directory / f"broker{broker_id}.jsonl"  # absent: no events


def test_a_profiled_phase_runs_its_load_inside_the_profile(tmp_path: Path) -> None:
    inside: list[bool] = []
    profiling = False
    graphs = Profiles(written={"broker1": tmp_path / "g.svg"})

    @contextmanager
    def profiled() -> Iterator[Profiles]:
        nonlocal profiling
        profiling = True
        yield graphs
        profiling = False

    def op(thread: int, n: int) -> OpResult:
        inside.append(profiling)
        return OpResult(True, units=100)

    fleet = cast(Any, _Fleet(tmp_path))
    cluster = Cluster(cast(Any, None), "/c", ZkEndpoint("127.0.0.1:1/c"), fleet, ExitStack())
    kept: list[Profiles | None] = []
    meter = CpuMeter({"bench": [os.getpid()]})
    phase = _measure("k", "title", op, 1, 0.05, "records", cluster, meter, profiled(), kept)
    assert phase.load.ok > 0
    assert inside
    assert all(inside)  # every operation ran while the profile was taken
    assert not profiling
    assert kept == [graphs]
    unprofiled = _measure("k", "title", op, 1, 0.05, "records", cluster, meter)
    assert unprofiled.load.ok > 0
    assert kept == [graphs]
