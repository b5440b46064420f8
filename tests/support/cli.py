"""Running the `testbed` command line in-process for tests (the test's own thread)."""

from __future__ import annotations

import pytest

from testbed.__main__ import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run `testbed` with `argv`; returns its exit code (argparse's too), stdout, stderr."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
