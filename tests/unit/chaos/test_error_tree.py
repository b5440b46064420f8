"""Chaos's errors form one tree under `ChaosError`, and `except Exception` stands only in
the outermost guards of the workload's threads, which report what killed them."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import chaos
from chaos.errors import ChaosError

ROOT = Path(chaos.__file__).parent
#: The outermost guards of a thread: whatever ends the thread is reported, not lost.
THREAD_GUARDS = {
    ("client/workload_run.py", "run"),  # `guarded`: each producer and consumer thread
    ("run/runner.py", "_work"),
    ("run/step_loop.py", "_hold"),  # each step's thread
    ("run/step_loop.py", "_act_in_turn"),  # the actions' thread
}


def _modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages([str(ROOT)], prefix="chaos."):
        if info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return names


def test_every_exception_class_of_chaos_derives_from_chaos_error() -> None:
    outside = []
    for name in _modules():
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            ours = cls.__module__ == name and issubclass(cls, BaseException)
            if ours and not issubclass(cls, ChaosError):
                outside.append(f"{name}.{cls.__name__}")
    assert outside == []


class _BroadHandlers(ast.NodeVisitor):
    """The functions that hold an `except Exception` of their own (not a nested one's)."""

    def __init__(self) -> None:
        self.functions: list[str] = []
        self.found: list[str] = []

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if isinstance(node.type, ast.Name) and node.type.id == "Exception":
            self.found.append(self.functions[-1] if self.functions else "<module>")
        self.generic_visit(node)


def _broad_handlers(path: Path) -> list[str]:
    visitor = _BroadHandlers()
    visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
    return visitor.found


def test_except_exception_stands_only_in_the_threads_outermost_guards() -> None:
    broad = set()
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        broad |= {(relative, function) for function in _broad_handlers(path)}
    assert broad <= THREAD_GUARDS
