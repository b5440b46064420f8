"""`BugSwitches`: the set of historical bugs a process re-introduces, parsed at the edge
and guarded so that no switch is ever on outside a chaos run or a test. Pure; any
thread."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bugs.catalog import CATALOG

#: The values of `BUG_SWITCHES_CONTEXT` under which switches are accepted.
ALLOWED_CONTEXTS = frozenset({"chaos", "test"})


class BugSwitchError(ValueError):
    """An unknown switch name, or switches asked for outside chaos runs and tests."""


@dataclass(frozen=True, slots=True)
class BugSwitches:
    """The switches that are on. Empty (`NO_BUGS`) in every normal process."""

    names: frozenset[str] = frozenset()

    def on(self, name: str) -> bool:
        """Whether the bug `name` (a `bugs.catalog` constant) is re-introduced."""
        return name in self.names

    def __bool__(self) -> bool:
        return bool(self.names)

    def render(self) -> str:
        """The comma-separated form `parse_switches` reads back (sorted)."""
        return ",".join(sorted(self.names))


NO_BUGS = BugSwitches()


def _known() -> str:
    return ", ".join(bug.name for bug in CATALOG)


def switches_of(names: Iterable[str]) -> BugSwitches:
    """Switches from names; BugSwitchError on a name not in the catalog."""
    known = {bug.name for bug in CATALOG}
    chosen = frozenset(names)
    unknown = sorted(chosen - known)
    if unknown:
        raise BugSwitchError(f"unknown bug switch {', '.join(unknown)}; known: {_known()}")
    return BugSwitches(chosen)


def parse_switches(raw: str | None) -> BugSwitches:
    """Switches from `"kafka-6082,kip-101"` (blank or None: none)."""
    if raw is None:
        return NO_BUGS
    names = [part.strip().lower() for part in raw.split(",")]
    return switches_of(name for name in names if name)


def require_allowed(switches: BugSwitches, context: str | None) -> BugSwitches:
    """`switches` if they may be on in `context` (`BUG_SWITCHES_CONTEXT`): any context
    when none is on, else only chaos runs and tests. BugSwitchError otherwise."""
    if switches and (context or "").strip().lower() not in ALLOWED_CONTEXTS:
        raise BugSwitchError(
            f"bug switches ({switches.render()}) re-introduce known Kafka bugs and are "
            "refused outside chaos runs and tests (BUG_SWITCHES_CONTEXT must be one of "
            f"{', '.join(sorted(ALLOWED_CONTEXTS))})"
        )
    return switches
