"""The report's one Spark job, the per-run pass: the runs dealt into a few groups of about
equal size (`groups_for`), one Spark task per group on the executors' Python workers. A
task reads each of its runs' files once (`rundir.reader.read_lines`, the chaos
engine's own reading), judges the run with the chaos invariants from those lines
(`pipeline.verdicts.verdict_row`) and keeps the rows its figures read, typed by the
explicit schemas (`pipeline.lines`); then it computes every figure of its runs, by run,
in pandas (`pipeline.figures`). Each table of a group comes back as one Arrow IPC stream,
and the driver concatenates them into one pandas frame per table, typed by its schema
(`pipeline.schemas`) as Spark's `toPandas` types.

Why the Python workers read the files rather than Spark's JSON reader: the invariants
need every field of every line and its line number, so the lines are decoded in Python
anyway; reading them into the JVM as well, and handing them to Python through Arrow and a
shuffle, cost more than judging them. Why groups of runs rather than one call per run:
pandas' fixed cost per operation (about a millisecond) times some two hundred operations
per call made the figures cost more than the data; a few calls per core pay it a few
times.

`groups_for` and `collect_per_run` run on the driver's thread; `judge_and_measure` (built
by `per_run`) on the executors' Python workers, one group of runs per call.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from eventlog.jsonlines import read_json_lines
from pipeline import figures, schemas
from pipeline.lines import RunRows, run_rows
from pipeline.page_rows import page_row
from pipeline.runs import RunConfig
from pipeline.verdicts import verdict_row
from rundir.history import HistoryFormatError, HistoryOp
from rundir.layout import RunDir
from rundir.reader import RunDirError, RunLines, history_by_file, read_lines

__all__ = [
    "PER_RUN_TABLES",
    "PLOTTING_TABLES",
    "collect_per_run",
    "groups_for",
    "partitions_for",
    "per_run",
    "run_bytes",
    "typed",
]

#: Groups of runs per core (`partitions_for`).
PARTITIONS_PER_CORE = 2
#: The tables `per_run` makes for every run, and their schemas.
PER_RUN_TABLES: dict[str, StructType] = {
    "verdicts": schemas.VERDICTS,
    "detection": schemas.DETECTION,
    "failovers": schemas.FAILOVERS,
    "elections": schemas.ELECTIONS,
    "unavailability": schemas.UNAVAILABILITY,
    "healed": schemas.HEALED,
    "latency": schemas.LATENCY,
}
#: What the pictures need besides, made when asked (`per_run(..., plotting=True)`).
PLOTTING_TABLES: dict[str, StructType] = {
    "rates": schemas.RATES,
    "sends": schemas.PLOTTED_SENDS,
    "pages": schemas.PAGES,
}


def partitions_for(spark: SparkSession) -> int:
    """How many partitions of runs the pass makes: `PARTITIONS_PER_CORE` per core of the
    session's default parallelism (each is one Python call; a few per core even out the
    runs' unequal costs)."""
    return PARTITIONS_PER_CORE * spark.sparkContext.defaultParallelism


def run_bytes(run: RunConfig) -> int:
    """The bytes of a run's JSON-lines files: what a task reads for it."""
    root = Path(run.path)
    return sum(p.stat().st_size for p in root.rglob("*.jsonl") if p.is_file())


def groups_for(runs: Sequence[RunConfig], groups: int) -> list[list[str]]:
    """The run ids of `runs` dealt into at most `groups` groups of about equal bytes (the
    largest run first, each to the lightest group so far), none empty."""
    sized = sorted(((run_bytes(r), r.run_id) for r in runs), reverse=True)
    dealt: list[tuple[int, list[str]]] = [(0, []) for _ in range(max(1, min(groups, len(runs))))]
    for size, run_id in sized:
        lightest = min(range(len(dealt)), key=lambda i: dealt[i][0])
        total, members = dealt[lightest]
        dealt[lightest] = (total + size, [*members, run_id])
    return [sorted(members) for _, members in dealt if members]


def _ipc(frame: pd.DataFrame, schema: StructType) -> bytes:
    table = pa.Table.from_pandas(frame, schema=to_arrow_schema(schema), preserve_index=False)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def _read(path: Path) -> tuple[RunLines | RunDirError, RunLines]:
    """The run's lines for its verdict (or why the invariants cannot read it), and those
    its figures read: a run without events/ still has its history and snapshots."""
    try:
        lines = read_lines(path)
        return lines, lines
    except RunDirError as exc:
        if not path.is_dir():
            return exc, RunLines(path, {}, {}, [])
        return exc, read_lines(path, events_required=False)


def _decoded(lines: RunLines) -> dict[Path, list[HistoryOp]] | None:
    """The history's operations by file, decoded once for the verdict and the figures;
    None when a line breaks the schema (the verdict then says which, and the figures
    read the lines as Spark would)."""
    try:
        return history_by_file(lines)
    except HistoryFormatError:
        return None


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off for the block, then on again if it was. A run's
    hundreds of thousands of decoded lines are containers that the collector walks again
    and again as they are made, though reference counting frees them when the run is
    done: with the collector on, it cost about a third of the pass. The few cycles the
    block leaves (pandas' own) go at the next collection after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def per_run(
    configs: Mapping[str, RunConfig], window_ms: int, plotting: bool = False
) -> Callable[[Iterable[list[str]]], Iterator[tuple[str, bytes]]]:
    """The body of the per-run pass: for one group of run ids, their verdicts (one run at
    a time) and their figures (by run), each table as (name, an Arrow IPC stream of the
    table's schema). The rates and the sends as the pictures draw them too, when
    `plotting`."""

    def judge_and_measure(groups: Iterable[list[str]]) -> Iterator[tuple[str, bytes]]:
        run_ids = sorted(r for group in groups for r in group)
        if not run_ids:
            return
        with _collector_paused():
            made = _tables(run_ids)
        names = {**PER_RUN_TABLES, **PLOTTING_TABLES}
        for name, frame in made.items():
            yield name, _ipc(frame[names[name].names], names[name])

    def _tables(run_ids: list[str]) -> dict[str, pd.DataFrame]:
        rows = RunRows()
        verdicts = []
        pages = []
        for run_id in run_ids:
            config = configs[run_id]
            path = Path(config.path)
            lines, readable = _read(path)
            decoded = _decoded(readable)
            row = verdict_row(config, lines, decoded)
            verdicts.append({k: v for k, v in row.items() if k != "verdict_json"})
            faults = [value for _, value in read_json_lines(RunDir(path).faults)]
            run_rows(rows, run_id, readable, faults, decoded)
            if plotting:
                pages.append(page_row(run_id, row.get("verdict_json"), readable, faults, decoded))
        frames = rows.frames()
        started = {r: configs[r].started_ms for r in run_ids}
        events, faults_frame = frames["events"], frames["faults"]
        sent = figures.sends(frames["sends"])
        made = {
            "verdicts": pd.DataFrame(verdicts, columns=schemas.VERDICTS.names),
            "detection": figures.detection(events, faults_frame),
            "failovers": figures.failovers(events, faults_frame, started),
            "elections": figures.elections(events, faults_frame, started),
            "unavailability": figures.unavailability(sent),
            "healed": figures.healed(frames["snapshots"]),
            "latency": figures.latency(sent, window_ms),
        }
        if plotting:
            made["rates"] = figures.rates(sent, window_ms)
            made["sends"] = sent
            made["pages"] = pd.DataFrame(pages, columns=schemas.PAGES.names)
        return made

    return judge_and_measure


def typed(tables: Sequence[pa.Table], schema: StructType) -> pd.DataFrame:
    """`tables` (of `schema`) as one pandas frame, converted as Spark's `toPandas` converts
    (an integer column with a null is float64, a boolean one object)."""
    arrow = to_arrow_schema(schema)
    return pa.concat_tables([t.cast(arrow) for t in tables] or [arrow.empty_table()]).to_pandas()


def collect_per_run(
    spark: SparkSession, runs: Sequence[RunConfig], window_ms: int, plotting: bool = False
) -> dict[str, pd.DataFrame]:
    """The per-run pass over `runs`, collected: each table of `PER_RUN_TABLES` (and of
    `PLOTTING_TABLES` when `plotting`) of every run, as one pandas frame each, unsorted."""
    configs = {r.run_id: r for r in runs}
    groups = groups_for(runs, partitions_for(spark))
    body = per_run(configs, window_ms, plotting)
    collected = spark.sparkContext.parallelize(groups, len(groups)).mapPartitions(body).collect()
    wanted = {**PER_RUN_TABLES, **(PLOTTING_TABLES if plotting else {})}
    parts: dict[str, list[pa.Table]] = {name: [] for name in wanted}
    for name, data in collected:
        parts[name].append(pa.ipc.open_stream(data).read_all())
    return {name: typed(parts[name], schema) for name, schema in wanted.items()}
