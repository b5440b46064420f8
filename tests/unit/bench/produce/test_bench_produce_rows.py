"""The produce benchmark's rows, built from figures as its measures return them: requests
against Metadata RPCs and latency against one round trip. Pure; no process is started."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.produce import throughput as produce
from bench.produce.options import COMMAND
from bench.produce.phases import Phase, Phases
from bench.produce.rpc_load import LoadResult
from bench.shared.arguments import parse_command
from bench.shared.report import Figure
from bench.shared.usage import CpuUsage


def _phase(key: str, threads: int, ok: int, units: int, p50_s: float) -> Phase:
    load = LoadResult(threads, 2.0, ok, 0, units, {}, p50_s, 2 * p50_s, p50_s, 3 * p50_s, 0, 2)
    cpu = CpuUsage({"bench": 1.0, "broker1": 1.0}, 3.0, 4.0)
    return Phase(key, key, load, cpu, {})


def test_produce_rows_compare_requests_with_rpcs_and_latency_with_one_round_trip(
    tmp_path: Path,
) -> None:
    settings = parse_command(COMMAND, ["--quick", "--out", str(tmp_path)])
    phases = Phases(
        _phase("metadata_sequential", 1, 2000, 2000, 0.0005),
        _phase("metadata_concurrent", 4, 4000, 4000, 0.002),
        _phase("acks_all", 4, 200, 20_000, 0.03),
        _phase("acks_1", 4, 300, 30_000, 0.02),
    )
    report = produce.report(settings, phases, {"floor_broker": 1})
    rows = {m.measure: m for m in report.measures}
    assert list(rows) == [
        "produce_acks_all",
        "produce_acks_all_p50",
        "produce_acks_1",
        "produce_acks_1_p50",
    ]
    acks_all = rows["produce_acks_all"]
    assert acks_all.kind is Figure.PER_SECOND
    assert (acks_all.figure, acks_all.floor) == (100.0, 2000.0)  # requests/s, RPC/s
    assert acks_all.ratio == pytest.approx(0.05)
    assert acks_all.extra["records_per_second"] == 10_000.0
    assert acks_all.partitions == 3
    latency = rows["produce_acks_1_p50"]
    assert latency.kind is Figure.SECONDS
    assert (latency.figure, latency.floor) == (0.02, 0.0005)
    assert latency.ratio == pytest.approx(40.0)
    assert report.details["summary"]["acks_all_x_acks_1_throughput"] == pytest.approx(0.667)
