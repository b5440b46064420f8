"""Historical bug switches: Kafka controller bugs re-introduced on purpose.

Each switch brings back the mechanism of one known bug of Kafka's ZooKeeper-era
controller (KAFKA-6082, KIP-380, KIP-101, ...), so that a chaos run can prove its
checkers would have caught it. Every switch is off by default and a process refuses
any switch outside chaos runs and tests (`require_allowed`). The catalog names each
switch, the Kafka JIRA it comes from and the mechanism it re-creates; docs/bugs.md
describes them. Nothing here does I/O; any thread.

    BugSwitchError        an unknown switch, or switches where they are not allowed
"""

from bugs.catalog import CATALOG, Bug, Side, bug_named
from bugs.switches import (
    ALLOWED_CONTEXTS,
    NO_BUGS,
    BugSwitchError,
    BugSwitches,
    parse_switches,
    require_allowed,
)

__all__ = [
    "ALLOWED_CONTEXTS",
    "CATALOG",
    "NO_BUGS",
    "Bug",
    "BugSwitchError",
    "BugSwitches",
    "Side",
    "bug_named",
    "parse_switches",
    "require_allowed",
]
