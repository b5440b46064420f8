"""The results of one produce benchmark: a table for people, `bench.json` for tools.

Ratios compare produce with the gRPC floor measured in the same run: batches/s against
the Metadata RPC/s of as many threads as there are producers, and the p50 batch latency
against the p50 of one sequential Metadata round trip ("each batch costs N round trips").
CPU is given per operation and per process, so that a slow phase shows where the box's
two cores went. Pure formatting plus one file write; main thread.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.rpc_load import LoadResult
from bench.usage import CpuUsage

_LABEL_WIDTH = 44
#: Above this share of busy CPU outside the measured processes, the table says so.
OTHER_CPU_WARNING = 0.15


@dataclass(frozen=True, slots=True)
class Phase:
    """One measured load with what it cost the machine."""

    key: str
    title: str
    load: LoadResult
    cpu: CpuUsage
    events: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        """Plain values for JSON."""
        return {
            "title": self.title,
            **self.load.as_dict(),
            "cpu": self.cpu.as_dict(),
            "cpu_ms_per_op": cpu_ms_per_op(self),
            "events": self.events,
        }


@dataclass(frozen=True, slots=True)
class ProduceBenchResult:
    """Everything one run measured."""

    settings: dict[str, Any]
    environment: dict[str, Any]
    topic: dict[str, Any]
    floor_sequential: Phase
    floor_concurrent: Phase
    acks_all: Phase
    acks_one: Phase


def cpu_ms_per_op(phase: Phase) -> dict[str, float | None]:
    """CPU milliseconds per successful operation: each process, other, and the box."""
    ops = phase.load.ok
    if ops == 0:
        return {}
    out: dict[str, float | None] = {
        name: round(s * 1000 / ops, 4) for name, s in phase.cpu.processes.items()
    }
    out["other"] = round(phase.cpu.other_s * 1000 / ops, 4)
    out["box"] = round(phase.cpu.box_busy_s * 1000 / ops, 4)
    return out


def own_cpu_ms(phase: Phase) -> float:
    """CPU ms per successful operation in the measured processes (bench, brokers,
    ZooKeeper), which other work on the machine does not inflate; NaN without operations."""
    if phase.load.ok == 0:
        return math.nan
    return sum(phase.cpu.processes.values()) * 1000 / phase.load.ok


def cpu_ceiling(phase: Phase, cores: int) -> float:
    """Operations per second the measured processes' CPU per operation allows on `cores`."""
    per_op = own_cpu_ms(phase)
    return math.nan if math.isnan(per_op) or per_op <= 0 else cores * 1000 / per_op


def _x(value: float, floor: float) -> float | None:
    if floor <= 0 or math.isnan(value) or math.isnan(floor):
        return None
    return round(value / floor, 3)


def summary(result: ProduceBenchResult) -> dict[str, Any]:
    """The headline figures and ratios."""
    seq, conc = result.floor_sequential.load, result.floor_concurrent.load
    out: dict[str, Any] = {
        "floor_sequential_rpc_per_s": round(seq.rate, 1),
        "floor_sequential_p50_ms": round(seq.p50_s * 1000, 3),
        "floor_concurrent_rpc_per_s": round(conc.rate, 1),
        "floor_concurrent_p50_ms": round(conc.p50_s * 1000, 3),
    }
    batch = result.settings["batch"]
    value_bytes = result.settings["value_bytes"]
    for phase in (result.acks_all, result.acks_one):
        load = phase.load
        out[phase.key] = {
            "records_per_s": round(load.units_rate, 1),
            "mb_per_s": round(load.units_rate * value_bytes / 1e6, 3),
            "batches_per_s": round(load.rate, 2),
            "p50_ms": round(load.p50_s * 1000, 3),
            "p99_ms": round(load.p99_s * 1000, 3),
            "batches_per_s_x_concurrent_floor": _x(load.rate, conc.rate),
            "p50_in_sequential_floor_round_trips": _x(load.p50_s, seq.p50_s),
            "p50_in_concurrent_floor_round_trips": _x(load.p50_s, conc.p50_s),
            "own_cpu_ms_per_batch": _round(own_cpu_ms(phase)),
            "own_cpu_x_floor_rpc": _x(own_cpu_ms(phase), own_cpu_ms(result.floor_concurrent)),
            "cpu_bound_batches_per_s": _round(cpu_ceiling(phase, _cores(result))),
            "records_per_batch": batch,
        }
    out["acks_all_x_acks_1_throughput"] = _x(result.acks_all.load.rate, result.acks_one.load.rate)
    out["acks_all_minus_acks_1_p50_ms"] = round(
        (result.acks_all.load.p50_s - result.acks_one.load.p50_s) * 1000, 3
    )
    return out


def _round(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 3)


def _cores(result: ProduceBenchResult) -> int:
    return int(result.environment.get("cpus") or 1)


def _row(label: str, rate: str, p50: str, p99: str, extra: str = "") -> str:
    return f"{label:<{_LABEL_WIDTH}}{rate:>16}{p50:>11}{p99:>11}   {extra}".rstrip()


def _ms(seconds: float) -> str:
    if math.isnan(seconds):
        return "-"
    return f"{seconds * 1000:.2f} ms" if seconds < 0.01 else f"{seconds * 1000:.1f} ms"


def _errors(load: LoadResult) -> str:
    if not load.errors and not load.failed:
        return "no errors"
    parts = [f"{name} x{count:,}" for name, count in load.errors.items()]
    return f"{load.failed:,} batches failed; attempt errors: " + (", ".join(parts) or "none")


def render_table(result: ProduceBenchResult) -> str:
    """The human summary."""
    s = result.settings
    seq, conc = result.floor_sequential, result.floor_concurrent
    lines = [
        f"produce on {s['brokers']} brokers: topic {s['topic']}, {s['partitions']} partitions, "
        f"RF {s['replication_factor']}; {s['producers']} producer threads, batches of "
        f"{s['batch']:,} x {s['value_bytes']:,} B, {s['duration_s']:g} s per acks setting",
        _row("", "rate", "p50", "p99"),
    ]
    for phase in (seq, conc):
        lines.append(
            _row(
                phase.title,
                f"{phase.load.rate:,.0f} RPC/s",
                _ms(phase.load.p50_s),
                _ms(phase.load.p99_s),
            )
        )
    for phase in (result.acks_all, result.acks_one):
        load = phase.load
        mb = load.units_rate * s["value_bytes"] / 1e6
        lines.append(
            _row(
                phase.title,
                f"{load.rate:,.1f} batches/s",
                _ms(load.p50_s),
                _ms(load.p99_s),
                f"{load.units_rate:,.0f} records/s, {mb:.2f} MB/s; {_errors(load)}",
            )
        )
    lines.append("")
    lines.extend(_ratios(result))
    lines.append("")
    lines.extend(_cpu_lines(result))
    lines.extend(_event_lines(result))
    return "\n".join(lines)


def _ratios(result: ProduceBenchResult) -> list[str]:
    seq, conc = result.floor_sequential.load, result.floor_concurrent.load
    threads = result.settings["producers"]
    lines = []
    for phase in (result.acks_all, result.acks_one):
        load = phase.load
        name = phase.key.replace("acks_all", "acks=all").replace("acks_1", "acks=1")
        lines.append(
            f"{name} batches/s = {_fmt_x(load.rate, conc.rate)} the {threads}-thread "
            f"Metadata RPC floor ({conc.rate:,.0f} RPC/s)"
        )
        lines.append(
            f"  each {name} batch costs {_fmt_n(load.p50_s, seq.p50_s)} round trips of the "
            f"sequential floor's p50 ({_ms(seq.p50_s)}), {_fmt_n(load.p50_s, conc.p50_s)} of "
            f"the {threads}-thread floor's ({_ms(conc.p50_s)})"
        )
    floor_cpu = own_cpu_ms(result.floor_concurrent)
    cores = _cores(result)
    for phase in (result.acks_all, result.acks_one):
        name = phase.key.replace("acks_all", "acks=all").replace("acks_1", "acks=1")
        lines.append(
            f"CPU: each {name} batch costs {own_cpu_ms(phase):.2f} ms in the bench, brokers "
            f"and ZooKeeper = {_fmt_n(own_cpu_ms(phase), floor_cpu)}x a Metadata RPC's "
            f"({floor_cpu:.2f} ms); {cores} cores allow ~{cpu_ceiling(phase, cores):,.0f} "
            f"batches/s at that cost (measured {phase.load.rate:,.0f})"
        )
    all_, one = result.acks_all.load, result.acks_one.load
    extra = all_.p50_s - one.p50_s
    lines.append(
        f"acks=all vs acks=1: {_fmt_x(all_.rate, one.rate)} the batches/s; p50 "
        f"{extra * 1000:+.1f} ms (= {_fmt_n(extra, seq.p50_s)} floor round trips) waiting "
        "for the followers"
    )
    return lines


def _fmt_x(value: float, floor: float) -> str:
    x = _x(value, floor)
    return "-" if x is None else f"{x:.2f}x"


def _fmt_n(value: float, floor: float) -> str:
    x = _x(value, floor)
    return "-" if x is None else f"{x:.1f}"


def _cpu_lines(result: ProduceBenchResult) -> list[str]:
    lines = ["CPU ms per operation (RPC or batch), and how busy the 2 cores were:"]
    phases = (result.floor_sequential, result.floor_concurrent, result.acks_all, result.acks_one)
    names = list(phases[0].cpu.processes)
    header = "".join(f"{n:>10}" for n in [*names, "other", "box"])
    lines.append(f"  {'':<{_LABEL_WIDTH - 2}}{header}   busy")
    for phase in phases:
        per_op = cpu_ms_per_op(phase)
        cells = "".join(
            f"{per_op[n]:>10.3f}" if per_op.get(n) is not None else f"{'-':>10}"
            for n in [*names, "other", "box"]
        )
        lines.append(
            f"  {phase.title:<{_LABEL_WIDTH - 2}}{cells}   {phase.cpu.box_busy_fraction:4.0%}"
        )
    return lines


def _event_lines(result: ProduceBenchResult) -> list[str]:
    lines = []
    for phase in (
        result.floor_sequential,
        result.floor_concurrent,
        result.acks_all,
        result.acks_one,
    ):
        cpu = phase.cpu
        if cpu.box_busy_s > 0 and cpu.other_s / cpu.box_busy_s > OTHER_CPU_WARNING:
            top = ", ".join(f"{k} {v:.2f} s" for k, v in cpu.top_others.items()) or "none"
            lines.append(
                f"note: {cpu.other_s / cpu.box_busy_s:.0%} of the busy CPU during "
                f"'{phase.title}' ({cpu.other_s:.2f} s) was outside the bench, its brokers and "
                f"ZooKeeper: irq+softirq {cpu.irq_s:.2f} s; other processes: {top}"
            )
    for phase in (result.acks_all, result.acks_one):
        if phase.events:
            counts = ", ".join(f"{k} x{v}" for k, v in phase.events.items())
            lines.append(f"events during {phase.title}: {counts}")
    return lines


def to_json(result: ProduceBenchResult) -> dict[str, Any]:
    """Every figure of the run as plain values."""
    return {
        "settings": result.settings,
        "environment": result.environment,
        "topic": result.topic,
        "summary": summary(result),
        "floor": {
            "metadata_sequential": result.floor_sequential.as_dict(),
            "metadata_concurrent": result.floor_concurrent.as_dict(),
        },
        "produce": {
            "acks_all": result.acks_all.as_dict(),
            "acks_1": result.acks_one.as_dict(),
        },
    }


def write_json(result: ProduceBenchResult, path: Path) -> None:
    """Write `to_json(result)` to `path`, indented."""
    path.write_text(json.dumps(to_json(result), indent=2) + "\n", encoding="utf-8")
