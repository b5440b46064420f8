"""No product module passes 400 lines (STYLE rule 10): a module that grows past it is split
by concept. Product modules are every `.py` file under a top-level package of the
repository (a directory with an `__init__.py`), except the generated `testbed_rpc` and the
tests. Runs on the test's thread; reads files only.
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
MAX_LINES = 400
NOT_PRODUCT = frozenset({"testbed_rpc", "tests"})


def _product_modules() -> dict[str, int]:
    """Each product module's path relative to the repository and its line count."""
    sizes: dict[str, int] = {}
    for package in sorted(REPO_ROOT.iterdir()):
        if package.name in NOT_PRODUCT or not (package / "__init__.py").is_file():
            continue
        for module in package.rglob("*.py"):
            with module.open("rb") as lines:
                sizes[module.relative_to(REPO_ROOT).as_posix()] = sum(1 for _ in lines)
    return sizes


def test_no_product_module_passes_the_line_limit() -> None:
    too_long = {path: lines for path, lines in _product_modules().items() if lines > MAX_LINES}
    assert not too_long, f"split by concept, at most {MAX_LINES} lines each: {too_long}"
