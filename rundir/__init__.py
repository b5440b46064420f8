"""The run-directory contract (docs/runs.md): what one chaos run leaves behind and how it is
judged, shared by the chaos runner, the PySpark report and the benchmarks, which all sit
above it. `layout` names a run directory's files (`RunDir`, its version); `history` is the
workload's history format (`HistoryOp`), written by `history_writer` and read as a stream
by `history_stream`; `events` is a node's
event log as values; `checker` judges a history against its final read; `invariants`
judges the cluster over event logs, history and snapshots; `results` is the one result
vocabulary of both (`Violation`, `InvariantResult`, `RunVerdict`); `reader` reads a run
directory into the invariants' inputs and writes its `verdict.json`; `rejudge` reads a
recorded (perhaps crashed) run as far as it can and judges it again, `check_report` adds
the history checker's classes (`python -m chaos check`); `jepsen_history` writes the
history as Jepsen's EDN ops (through `edn`); `audit` is the replica audit's `audit.json`
(rows per replica and epoch, and where the replicas disagree); `coverage` the behaviours a
run's event logs show (`coverage.json`, the blind hunt's feedback). It imports only the
packages below the tools (`eventlog`, `zkdata`). Pure values and file I/O on the calling
thread, except `HistoryWriter`, safe from any thread.

Errors::

    RunDirError (ValueError)       a run directory the contract refuses
    ├── RunDirVersionError         another `run_dir_version` (`layout.check_version`)
    ├── HistoryFormatError         a history line breaking its schema (`history`)
    ├── HistoryOrderError          a history file going back in time (`history_stream`;
    │                              the streaming checker then reads the files whole)
    └── EventFormatError           an event line breaking its envelope (`events`)
"""

from rundir.errors import RunDirError
from rundir.events import Event, EventFormatError
from rundir.history import HistoryFormatError, HistoryOp
from rundir.layout import RUN_DIR_VERSION, RunDir, RunDirVersionError
from rundir.reader import load_run, write_verdict
from rundir.results import InvariantResult, RunVerdict, Violation

__all__ = [
    "RUN_DIR_VERSION",
    "Event",
    "EventFormatError",
    "HistoryFormatError",
    "HistoryOp",
    "InvariantResult",
    "RunDir",
    "RunDirError",
    "RunDirVersionError",
    "RunVerdict",
    "Violation",
    "load_run",
    "write_verdict",
]
