"""docs/scenarios.md, generated: `render()` builds the page from the scenarios' runbooks
(their module docstrings), their invariants and nominal schedules, and from the registries
of fault kinds, action kinds, roles and invariants; the prose between them is in
`chaos.cli.scenarios_doc_text`. `python -m chaos.cli.scenarios_doc [PATH]`
(`make docs`) writes it
(default `docs/scenarios.md`, from the repository root); a test checks the file equals
`render()`.

A registry entry without a description here is refused (`MissingDescription`), so every
fault kind, action, role and invariant the code knows is on the page. Pure apart from
`main`'s file write; any thread.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from chaos import errors, faults
from chaos.cli import scenarios_doc_text as doc_text
from chaos.cluster import roles
from chaos.cluster.roles import ROLE_NAMES, RoleClass, parse_role
from chaos.errors import ChaosError
from chaos.faults.params import ParamRule
from chaos.faults.registry import FAULT_TYPES, FaultType
from chaos.generator import generic, overlap, random_mix, shrink, timeline
from chaos.generator.action_kinds import ACTION_KINDS
from chaos.generator.random_mix import MIX_KINDS
from chaos.generator.scenarios import SCENARIOS, Scenario, invariant_names, judged, scenario
from chaos.generator.scenarios.invariant_names import (
    CORE_INVARIANTS,
    EVERY_RUN_INVARIANTS,
    INVARIANTS,
)
from chaos.generator.scenarios.scenario import SESSION_TIMEOUT_S
from chaos.generator.schedule import SCHEDULE_VERSION, Schedule, Trigger
from chaos.run import actions, event_watch

__all__ = ["DEFAULT_PATH", "MissingDescription", "main", "render"]

#: Where `main` writes the page unless told otherwise, from the repository root.
DEFAULT_PATH = Path("docs") / "scenarios.md"


class MissingDescription(ChaosError, ValueError):
    """A registry names something the page has no description for."""


def _described(names: Iterable[str], descriptions: Mapping[str, str], what: str) -> None:
    """Refuse a name without a description, and a description of a name that is gone."""
    known = list(names)
    missing = [name for name in known if name not in descriptions]
    if missing:
        raise MissingDescription(f"no description of the {what} {', '.join(missing)}")
    stale = sorted(set(descriptions) - set(known))
    if stale:
        raise MissingDescription(f"a description of the {what} {', '.join(stale)}, gone")


_WIDTH = 90
_KEEP = ("|", "-", "```", "#", "<!--", " ")


def _prose(text: str, names: Mapping[str, str]) -> str:
    """`text` with the code's names filled in, its plain paragraphs wrapped to `_WIDTH`
    (tables, lists, headings and fenced blocks kept as written)."""
    blocks = text.format(**names).strip("\n").split("\n\n")
    fenced = False
    out: list[str] = []
    for block in blocks:
        plain = not fenced and not block.startswith(_KEEP) and not block[:1].isdigit()
        fenced ^= block.count("```") % 2 == 1
        words = " ".join(block.split())
        out.append(textwrap.fill(words, _WIDTH, break_long_words=False) if plain else block)
    return "\n\n".join(out)


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _param(rule: ParamRule) -> str:
    default = "required" if rule.default is None else f"{rule.default}"
    return f"`{rule.name}` ({default}; {rule.expects})"


def _params(rules: Sequence[ParamRule]) -> str:
    return ", ".join(_param(rule) for rule in rules) or "-"


_TARGET_WORDS = {
    frozenset({RoleClass.BROKERS}): "brokers",
    frozenset({RoleClass.ZOOKEEPER}): "ZooKeeper servers",
    frozenset({RoleClass.BROKERS, RoleClass.ZOOKEEPER}): "brokers or ZooKeeper servers",
    frozenset(RoleClass): "any role",
}


def _targets(kind: FaultType) -> str:
    if kind.only_role is not None:
        return f"`{kind.only_role}` only"
    return _TARGET_WORDS[kind.targets]


def _duration(kind: FaultType) -> str:
    base = {True: "> 0", False: "0", None: "≥ 0"}[kind.lasts]
    note = doc_text.DURATION_NOTES.get(kind.name)
    return f"{base} ({note})" if note else base


def _fault_kinds() -> str:
    rows = [
        (f"`{kind.name}`", _targets(kind), _duration(kind), _params(kind.params))
        for kind in FAULT_TYPES.values()
    ]
    return _table(("kind", "targets", "duration", "params (default; range)"), rows)


def _actions() -> str:
    _described(ACTION_KINDS, doc_text.ACTIONS, "action")
    rows = [
        (f"`{kind.name}`", _params(kind.params), doc_text.ACTIONS[kind.name])
        for kind in ACTION_KINDS.values()
    ]
    return _table(("action", "params (default; range)", "what the runner does"), rows)


_CLASS_WORDS = {
    RoleClass.BROKERS: "brokers",
    RoleClass.ZOOKEEPER: "ZooKeeper",
    RoleClass.ANY: "any",
}
_SAMPLES = {"<n>": "1", "<id>": "1", "<topic>": "t", "<partition>": "0"}


def _role_class(name: str) -> str:
    sample = name
    for placeholder, value in _SAMPLES.items():
        sample = sample.replace(placeholder, value)
    role = parse_role(sample)
    words = _CLASS_WORDS[role.role_class]
    return f"{words}, a group" if role.group else words


def _roles() -> str:
    _described(ROLE_NAMES, doc_text.ROLES, "role")
    rows = [(f"`{name}`", words, _role_class(name)) for name, words in doc_text.ROLES.items()]
    return _table(("role", "resolves to", "class"), rows)


def _judged(name: str) -> str:
    """When a verdict judges the invariant `name`."""
    if name in CORE_INVARIANTS:
        return "every scenario"
    return "every run" if name in EVERY_RUN_INVARIANTS else "when named"


def _invariants() -> str:
    order = ("every scenario", "when named", "every run")
    ordered = sorted(INVARIANTS, key=lambda name: order.index(_judged(name)))
    rows = [(f"`{name}`", _judged(name), INVARIANTS[name]) for name in ordered]
    return _table(("name", "judged", "holds when"), rows)


def _example() -> str:
    """The schedule.json example, one step or action a line; refused unless it reads back
    as a schedule with the same JSON."""
    example = doc_text.example_schedule(SCHEDULE_VERSION)
    if Schedule.from_json(example).to_json() != example:
        raise ValueError("the documented schedule.json example does not read back as itself")
    lines = ["{"]
    for key, value in example.items():
        if isinstance(value, list):
            items = [f"    {json.dumps(item)}" for item in value]
            lines.append(f'  "{key}": [\n' + ",\n".join(items) + "\n  ],")
        else:
            lines.append(f'  "{key}": {json.dumps(value)},')
    lines[-1] = lines[-1].rstrip(",")
    return "```json\n" + "\n".join(lines) + "\n}\n```"


def _faults_of(item: Scenario) -> str:
    special = doc_text.SCENARIO_FAULTS.get(item.name)
    if special is not None:
        return special
    nominal = item.schedule(None)
    kinds: list[str] = []
    for step in nominal.steps:
        word = f"`{step.fault.kind}`" + (" (on an event)" if step.trigger else "")
        if word not in kinds:
            kinds.append(word)
    names = sorted({f"`{action.kind}`" for action in nominal.actions})
    if names:
        kinds.append(("actions " if len(names) > 1 else "action ") + ", ".join(names))
    return ", ".join(kinds)


def _workload(item: Scenario) -> str:
    load = item.workload
    return (
        f"{load.partitions} partitions, RF {load.replication_factor}, "
        f"min ISR {load.min_insync_replicas}, {_seconds(load.duration_s)}"
    )


def _overview() -> str:
    rows = [
        (
            f"[`{name}`](#{name})",
            _workload(item),
            _faults_of(item),
            _seconds(item.convergence_s),
        )
        for name, item in SCENARIOS.items()
    ]
    return _table(("scenario", "workload", "faults", "bound"), rows)


def _section(item: Scenario) -> str:
    first, _, body = item.runbook.partition("\n")
    summary = first.partition(": ")[2]
    judged = item.invariants_for(item.schedule(None))
    invariants = ", ".join(f"`{name}`" for name in sorted(judged))
    return (
        f"### {item.name}\n\n{summary[0].upper()}{summary[1:]}\n\n{body.strip()}\n\n"
        f"Invariants: {invariants}. Convergence bound: {_seconds(item.convergence_s)}.\n\n"
        f"Nominal schedule (no seed):\n\n```\n{item.schedule(None).describe()}\n```"
    )


def _names() -> dict[str, str]:
    """The code's names the prose refers to, as they are today."""
    excluded = ", ".join(f"`{kind}`" for kind in FAULT_TYPES if kind not in MIX_KINDS)
    return {
        "version": str(SCHEDULE_VERSION),
        "scenarios": scenario.__name__.rpartition(".")[0],
        "scenario": scenario.__name__,
        "invariant_names": invariant_names.__name__,
        "kinds": FaultType.__module__,
        "faults": faults.__name__,
        "roles": roles.__name__,
        "actions": actions.__name__,
        "event_watch": event_watch.__name__,
        "schedule": Trigger.__module__,
        "schedule_errors": errors.__name__,
        "shrink": shrink.__name__,
        "timeline": timeline.__name__,
        "session_s": f"{SESSION_TIMEOUT_S:g}",
        "mix_excluded": excluded,
        "generic": generic.__name__,
        "overlap": overlap.__name__,
        "judged": judged.__name__,
        "random_mix": random_mix.__name__,
        "doc": scenario.__name__.rpartition(".")[0] + ".doc",
        "doc_text": doc_text.__name__,
    }


def render() -> str:
    """The whole of docs/scenarios.md."""
    names = _names()
    parts = [
        _prose(doc_text.HEAD, names),
        _example(),
        _table(
            ("field", "type", "meaning"),
            [[cell.format(**names) for cell in row] for row in doc_text.SCHEDULE_FIELDS],
        ),
        _prose(doc_text.PARAMS, names),
        _prose(doc_text.FAULT_KINDS_HEAD, names),
        _fault_kinds(),
        _prose(doc_text.ACTIONS_HEAD, names),
        _actions(),
        _prose(doc_text.ACTIONS_TAIL, names),
        _prose(doc_text.ROLES_HEAD, names),
        _roles(),
        _prose(doc_text.SEEDS_AND_SHRINKING, names),
        _prose(doc_text.INVARIANTS_HEAD, names),
        _invariants(),
        _prose(doc_text.SCENARIOS_HEAD, names),
        _overview(),
        *(_section(item) for item in SCENARIOS.values()),
    ]
    return "\n\n".join(part.strip("\n") for part in parts) + "\n"


def main(argv: Sequence[str] = ()) -> int:
    """Write the page to `argv[0]` (default `DEFAULT_PATH`); exit code 0."""
    path = Path(argv[0]) if argv else DEFAULT_PATH
    path.write_text(render(), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
