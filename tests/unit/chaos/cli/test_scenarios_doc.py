"""docs/scenarios.md is what `chaos.cli.scenarios_doc` generates from the scenarios' runbooks
and the registries (`make docs` writes it), so it cannot fall behind the code; the
generator refuses a fault kind, action, role or invariant it has no words for."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chaos.cli import scenarios_doc as doc
from chaos.cli import scenarios_doc_text as doc_text
from chaos.cluster.roles import ROLE_NAMES
from chaos.faults.registry import FAULT_TYPES
from chaos.generator.action_kinds import ACTION_KINDS
from chaos.generator.scenarios import SCENARIOS
from chaos.generator.scenarios.scenario import INVARIANTS
from chaos.generator.schedule import SCHEDULE_VERSION, Schedule

DOC = (Path(__file__).resolve().parents[4] / "docs" / "scenarios.md").read_text()


def test_the_page_is_what_the_code_generates() -> None:
    assert doc.render() == DOC, "docs/scenarios.md is stale: run `make docs`"


@pytest.mark.parametrize(
    "name", [*FAULT_TYPES, *ACTION_KINDS, *INVARIANTS, *(r.split(":")[0] for r in ROLE_NAMES)]
)
def test_every_kind_action_role_and_invariant_has_a_row(name: str) -> None:
    assert re.search(rf"^\| `{re.escape(name)}[`:]", DOC, re.MULTILINE), name


@pytest.mark.parametrize("table", ["ACTIONS", "ROLES"])
def test_a_name_without_words_or_words_without_a_name_is_refused(
    table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    words = dict(getattr(doc_text, table))
    first = next(iter(words))
    monkeypatch.setattr(doc_text, table, {k: v for k, v in words.items() if k != first})
    with pytest.raises(doc.MissingDescription, match=re.escape(first)):
        doc.render()
    monkeypatch.setattr(doc_text, table, {**words, "gone": "a name the code no longer has"})
    with pytest.raises(doc.MissingDescription, match="gone"):
        doc.render()


def test_the_schedule_version_is_the_one_documented() -> None:
    assert f"## schedule.json (version {SCHEDULE_VERSION})" in DOC
    assert f'"version": {SCHEDULE_VERSION},' in DOC


def test_the_documented_example_is_a_valid_schedule() -> None:
    match = re.search(r"```json\n(.*?)```", DOC, re.DOTALL)
    assert match
    schedule = Schedule.from_json(json.loads(match.group(1)))
    assert schedule.to_json() == json.loads(match.group(1))


def test_main_writes_the_page(tmp_path: Path) -> None:
    path = tmp_path / "scenarios.md"
    assert doc.main([str(path)]) == 0
    assert path.read_text(encoding="utf-8") == doc.render()


def test_the_readme_counts_the_scenarios_there_are() -> None:
    readme = (Path(__file__).resolve().parents[4] / "README.md").read_text()
    counted = re.search(r"make chaos-list +# the scenarios \((\d+)\)", readme)
    assert counted is not None, "README.md names `make chaos-list` with the scenarios' count"
    assert int(counted.group(1)) == len(SCENARIOS)
