"""The live view's pure parts (rates, the plain line, the rich panel) and its plain mode."""

from __future__ import annotations

import io

from rich.console import Console

from chaos.run.live import LiveView, RunStatus, plain_line, rates_between, render

STATUS = RunStatus(
    scenario="broker-failure",
    seed=7,
    elapsed_s=42.0,
    total_s=90.0,
    phase="faults",
    active_faults=("kill broker2",),
    counts={"send ok": 500, "send fail": 2, "send info": 1},
    rates={"send ok": 20.0},
    controller=3,
    controller_epoch=4,
)


def test_rates_are_per_second_between_samples() -> None:
    assert rates_between({"send ok": 10}, 1.0, {"send ok": 30, "poll ok": 4}, 3.0) == {
        "send ok": 10.0,
        "poll ok": 2.0,
    }
    assert rates_between({}, 2.0, {"send ok": 5}, 2.0) == {"send ok": 0.0}


def test_the_plain_line_names_faults_controller_and_counts() -> None:
    line = plain_line(STATUS)
    assert "42.0/90s" in line
    assert "faults [kill broker2]" in line
    assert "controller broker 3, epoch 4" in line
    assert "send ok 500 (20.0/s)" in line
    assert "poll ok" not in line  # not counted yet, not shown


def test_the_panel_renders_the_same_figures() -> None:
    console = Console(file=io.StringIO(), width=100, color_system=None)
    console.print(render(STATUS))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "chaos broker-failure (seed 7)" in text
    assert "kill broker2" in text
    assert "broker 3, epoch 4" in text


def test_plain_mode_throttles_lines_unless_forced() -> None:
    out = io.StringIO()
    with LiveView(out, force_plain=True) as view:
        view.update(STATUS)
        view.update(STATUS)  # within PLAIN_EVERY_S: dropped
        view.update(STATUS, force=True)
        view.say("fault healed")
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert lines[-1] == "fault healed"
