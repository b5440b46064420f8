"""One hunt per compose project: a second holder is refused at once, with who holds it,
and the lock is free again once the first lets go."""

from __future__ import annotations

from pathlib import Path

import pytest

from chaos.cluster.project_lock import ProjectBusy, held


def test_a_second_holder_is_refused_while_the_first_holds(tmp_path: Path) -> None:
    with held(tmp_path, "testbed-bugs") as path:
        assert path.read_text().startswith("pid ")
        with (
            pytest.raises(ProjectBusy, match=r"testbed-bugs is in use by pid \d+"),
            held(tmp_path, "testbed-bugs"),
        ):
            pass


def test_other_projects_and_later_holders_go_ahead(tmp_path: Path) -> None:
    with held(tmp_path, "a"), held(tmp_path, "b"):
        pass
    with held(tmp_path / "new", "a") as path:
        assert path.parent == tmp_path / "new"
