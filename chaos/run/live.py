"""The live view of a chaos run: elapsed time, the run's phase, the faults in effect, the
workload's ok/fail/info rates, the controller with its epoch, and the historical bug
switches the brokers run with (none in a normal run).

On a terminal it is a `rich` live panel redrawn a few times a second; otherwise (CI logs,
a pipe) one plain line every `PLAIN_EVERY_S`. `render` and `plain_line` are pure; the view
is updated from the runner's thread only.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import TextIO

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

#: Seconds between plain lines when the output is not a terminal.
PLAIN_EVERY_S = 5.0
#: History line kinds shown, as `"<f> <type>"` keys of the workload's counts.
SHOWN = ("send ok", "send fail", "send info", "poll ok", "poll fail")


@dataclass(frozen=True, slots=True)
class RunStatus:
    """What the view shows at one instant."""

    scenario: str
    seed: int | None
    elapsed_s: float
    total_s: float
    phase: str
    active_faults: tuple[str, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    rates: Mapping[str, float] = field(default_factory=dict)
    controller: int | None = None
    controller_epoch: int | None = None
    note: str = ""
    bug_switches: tuple[str, ...] = ()


def rates_between(
    before: Mapping[str, int], before_s: float, after: Mapping[str, int], after_s: float
) -> dict[str, float]:
    """Per-second rates of every count between two samples (0 when no time passed)."""
    span = after_s - before_s
    if span <= 0:
        return {k: 0.0 for k in after}
    return {k: (after[k] - before.get(k, 0)) / span for k in after}


def _controller(status: RunStatus) -> str:
    if status.controller is None:
        return "none"
    return f"broker {status.controller}, epoch {status.controller_epoch}"


def plain_line(status: RunStatus) -> str:
    """One line for logs: `  42.0/90s faults  [kill broker2]  send ok 512 (20.1/s) ...`."""
    faults = ", ".join(status.active_faults) or "none"
    counts = " ".join(
        f"{k} {status.counts.get(k, 0)} ({status.rates.get(k, 0.0):.1f}/s)"
        for k in SHOWN
        if k in status.counts
    )
    note = f"  {status.note}" if status.note else ""
    bugs = f"  bugs [{', '.join(status.bug_switches)}]" if status.bug_switches else ""
    return (
        f"{status.elapsed_s:6.1f}/{status.total_s:.0f}s {status.phase:<10} "
        f"faults [{faults}]  controller {_controller(status)}  {counts}{bugs}{note}"
    )


def render(status: RunStatus) -> Group:
    """The panel: a header line, then a two-column table of the figures."""
    seed = "" if status.seed is None else f" (seed {status.seed})"
    header = Text.assemble(
        (f"chaos {status.scenario}{seed}", "bold"),
        f"  {status.elapsed_s:.1f} / {status.total_s:.0f} s  ",
        (status.phase, "cyan"),
    )
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_column(style="dim")
    table.add_column()
    faults = ", ".join(status.active_faults) or "none"
    table.add_row("faults", Text(faults, style="red" if status.active_faults else "green"))
    table.add_row("controller", _controller(status))
    if status.bug_switches:
        table.add_row("bug switches", Text(", ".join(status.bug_switches), style="bold red"))
    for key in SHOWN:
        if key in status.counts:
            style = "green" if key.endswith("ok") else ("yellow" if key.endswith("info") else "red")
            table.add_row(
                key,
                Text(f"{status.counts[key]:>8}  {status.rates.get(key, 0.0):7.1f}/s", style=style),
            )
    if status.note:
        table.add_row("note", status.note)
    return Group(header, table)


class LiveView:
    """`with LiveView(out) as view: view.update(status)`: a live panel on a terminal,
    plain lines elsewhere."""

    def __init__(self, out: TextIO | None = None, force_plain: bool = False) -> None:
        self._out = out if out is not None else sys.stdout
        self._console = Console(file=self._out)
        self._plain = force_plain or not self._console.is_terminal
        self._live: Live | None = None
        self._last_plain = float("-inf")

    def __enter__(self) -> LiveView:
        if not self._plain:
            self._live = Live(console=self._console, refresh_per_second=4, transient=False)
            self._live.__enter__()
        return self

    def update(self, status: RunStatus, force: bool = False) -> None:
        """Show `status` (plain mode: at most one line per `PLAIN_EVERY_S` unless `force`)."""
        if self._live is not None:
            self._live.update(render(status))
            return
        now = time.monotonic()
        if force or now - self._last_plain >= PLAIN_EVERY_S:
            self._last_plain = now
            print(plain_line(status), file=self._out, flush=True)

    def say(self, line: str) -> None:
        """A line above the panel (or in the log): a fault started, healed, a phase."""
        if self._live is not None:
            self._live.console.print(line)
        else:
            print(line, file=self._out, flush=True)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._live is not None:
            self._live.__exit__(kind, exc, tb)
            self._live = None
