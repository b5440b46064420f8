"""The `rundir` package keeps a small public surface, and every error it raises is a
`RunDirError`, as its docstring draws them."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import rundir
from rundir import RunDirError

PUBLIC = {
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
}


def _modules() -> list[str]:
    return [info.name for info in pkgutil.walk_packages(rundir.__path__, prefix="rundir.")]


def test_the_package_exports_only_its_surface() -> None:
    assert set(rundir.__all__) == PUBLIC
    assert all(hasattr(rundir, name) for name in PUBLIC)


def test_every_error_of_the_package_is_a_run_dir_error() -> None:
    errors = {
        cls
        for name in _modules()
        for _, cls in inspect.getmembers(importlib.import_module(name), inspect.isclass)
        if issubclass(cls, BaseException) and cls.__module__.startswith("rundir")
    }
    assert {e.__name__ for e in errors} >= {
        "RunDirError",
        "RunDirVersionError",
        "HistoryFormatError",
        "EventFormatError",
    }
    assert all(issubclass(e, RunDirError) for e in errors), errors


def test_the_docstring_draws_every_error() -> None:
    doc = rundir.__doc__ or ""
    for name in ("RunDirError", "RunDirVersionError", "HistoryFormatError", "EventFormatError"):
        assert name in doc
