"""The run directories' JSON-lines files as families for Spark's JSON reader: each
family's explicit schema (`pipeline.schemas`), how deep its files sit, the column without
which a line did not parse, where a run's files are, and the run id from a file's path.
The benchmark's floor reads every file so (`bench.pipeline`); the report's per-run pass
reads the same files in its Python tasks and types their rows by the same schemas
(`pipeline.run_pass`, `pipeline.lines`). Driver thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from pipeline import schemas
from pipeline.runs import RunConfig

__all__ = ["FAMILIES", "run_files", "run_id_column"]

#: Each file family: its schema, how deep its files sit below the run directory, and the
#: column without which a line did not parse.
FAMILIES: dict[str, tuple[StructType, int, str]] = {
    "faults": (schemas.FAULTS, 1, "phase"),
    "events": (schemas.EVENTS, 2, "kind"),
    "history": (schemas.HISTORY, 2, "type"),
    "snapshots": (schemas.SNAPSHOTS, 1, "after_heal_ms"),
}


def run_id_column(depth: int) -> Column:
    """The run id from a file's path: the directory `depth` levels above the file."""
    parts = F.split(F.col("_metadata.file_path"), "/")
    return F.element_at(parts, -1 - depth)


def run_files(runs: Sequence[RunConfig]) -> dict[str, list[Path]]:
    """The files of each family (`FAMILIES`) of `runs`."""
    roots = [Path(r.path) for r in runs]
    return {
        "faults": [root / "faults.jsonl" for root in roots if (root / "faults.jsonl").exists()],
        "events": sorted(p for root in roots for p in (root / "events").glob("*.jsonl")),
        "history": sorted(p for root in roots for p in (root / "history").glob("*.jsonl")),
        "snapshots": [
            root / "snapshots.jsonl" for root in roots if (root / "snapshots.jsonl").exists()
        ],
    }
