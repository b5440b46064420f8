"""The history checker judging a history as it is read (`check_files`, `check_stream`):
the same `RunVerdict` as `rundir.checker.check` over the whole history, with memory that
follows the partitions, the operations in flight and what each partition's records need,
never the operations already judged. Reads files and judges on the calling thread.

`check_files` reads the final read first, from the file of the process that made it
(unless it is given), then the history merged from its files by `time_ns` as they are
read (`rundir.history_stream`), each operation folded at once into `ChecksFold` (the
checks of `rundir.checker.checks`) and `QueueFold` (Jepsen's classes) in one dispatch
(`rundir.checker.history_fold`) and dropped. A
history of more files than `bucket_bytes` is split by partition on disk and judged a
bucket at a time (`rundir.checker.parts`), for memory that does not follow its length.
Two histories the merge cannot stream fall back to reading the files whole, with the same
verdict: a file that goes back in time, and lines of the final read's process outside
its own file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from rundir.checker.checks import check
from rundir.checker.final_index import FinalIndex, final_index, final_index_of
from rundir.checker.history_fold import fold_history, unplaced
from rundir.checker.index import FinalRead, final_read_from_history
from rundir.checker.parts import OutsideItsFile, check_in_parts
from rundir.checker.queue import QueuePolicy, queue_verdict
from rundir.checker.queue_fold import QueueFold
from rundir.checker.spill import bucket_count
from rundir.checker.stream_checks import ChecksFold
from rundir.history import FINAL_READ_PROCESS, HistoryOp, history_path, read_history
from rundir.history_stream import HistoryOrderError, iter_history_file, stream_history
from rundir.results import RunVerdict

__all__ = ["BUCKET_BYTES", "check_files", "check_stream"]


#: About how much history (bytes of its files) one bucket holds when `check_files`
#: judges a history in parts: the resident memory follows it, not the history's length.
BUCKET_BYTES = 32 << 20


def check_stream(
    history: Iterable[HistoryOp],
    final: FinalRead | FinalIndex,
    policy: QueuePolicy | None = None,
    *,
    final_process: str | None = None,
    final_lines: int | None = None,
) -> RunVerdict:
    """`rundir.checker.check` over `history` taken one operation at a time, in history
    order (`time_ns`, as `read_history` merges it). With `final_process` and
    `final_lines`, raises `OutsideItsFile` when the history holds another number of
    that process's lines than the final read was rebuilt from."""
    index = final_index(final)
    checks, queue = ChecksFold(index), QueueFold(index.partitions)
    counts: Counter[tuple[str, str]] = Counter()
    mine = fold_history(unplaced(history), checks, queue, counts, final_process)
    if final_lines is not None and mine != final_lines:
        raise OutsideItsFile(f"{mine} lines of {final_process}, {final_lines} in its file")
    checks.end()
    verdict = queue_verdict(queue, index, policy or QueuePolicy())
    return RunVerdict(
        checks.results() + verdict.results,
        checks.unread_partitions(),
        {f"{f} {t}": n for (f, t), n in counts.items()},
        verdict.stats,
    )


def check_files(
    paths: Sequence[Path],
    final: FinalRead | None = None,
    policy: QueuePolicy | None = None,
    *,
    final_process: str = FINAL_READ_PROCESS,
    bucket_bytes: int = BUCKET_BYTES,
    scratch: Path | None = None,
) -> RunVerdict:
    """`rundir.checker.check` over the history files `paths` (`read_history`'s) and the
    `final` read, rebuilt from the polls of `final_process` when not given, judged as the
    files are read. A history of more than `bucket_bytes` whose final read is not given is
    judged in parts of about that size (`rundir.checker.parts`), split into a temporary
    directory under `scratch` ($TMPDIR when None)."""
    try:
        if final is not None:
            return check_stream(stream_history(paths), final, policy)
        buckets = bucket_count(paths, bucket_bytes)
        if buckets > 1:
            return check_in_parts(paths, buckets, policy or QueuePolicy(), final_process, scratch)
        own = [p for p in paths if p == history_path(p.parent, final_process)]
        index, lines = final_index_of(
            (op for path in own for op in iter_history_file(path)), final_process
        )
        return check_stream(
            stream_history(paths),
            index,
            policy,
            final_process=final_process,
            final_lines=lines,
        )
    except (HistoryOrderError, OutsideItsFile):
        ops = read_history(paths)
        if final is None:
            final = final_read_from_history(ops, final_process)
        return check(ops, final, policy)
