"""The chaos command line: `python -m chaos <command>`.

    python -m chaos list
    python -m chaos run SCENARIO [--seed N] [--duration S] [--project NAME] [--runs DIR]
    python -m chaos all [--seed N] [--scenarios a,b]
    python -m chaos replay RUN_DIR
    python -m chaos shrink RUN_DIR [--max-runs N]
    python -m chaos heal [--project NAME] [--state-dir DIR]
    python -m chaos bugs [--bugs a,b] [--runs N] [--seeds 1,2] [--max-shrink N]
    python -m chaos hunt [--bugs a,b] [--runs N] [--seeds 1,2] [--run-seconds S] [--out DIR]
    python -m chaos soak [--runs N] [--seeds 1,2] [--soak-seed N] [--run-seconds S] [--out DIR]
    python -m chaos compare [--base REF_OR_DIR] [--head REF_OR_DIR] [--scenarios a,b] [--seeds 1,2]
    python -m chaos check RUN_DIR [--json]
    python -m chaos export-history RUN_DIR --format jepsen [--out FILE]

`run` performs a scenario's schedule on the running compose project with the workload
running and judges it (`chaos.run.runner`; docs/chaos.md); `all` runs every scenario and
prints one table; `replay` runs a recorded schedule again; `shrink` replays ever smaller
subsets of a failing run's schedule and prints the smallest that still fails.

`bugs` hunts the historical bug switches on a compose project of its own
(`chaos.hunt.command`; docs/bugs.md): exit 0 only when every bug was caught and its fixed
build ran clean. `hunt` hunts them blind, with the generic generator and coverage
feedback only (`chaos.hunt.blind_command`; docs/bugs.md, "Blind hunt"): exit 0 only when
every switch was caught and the fixed build raised no alarm. `soak` runs fresh generic
schedules, seeds no hunt draws, on the fixed build (`chaos.hunt.soak_command`; docs/bugs.md,
"False alarms on the fixed build"): exit 0 only when no run raised an alarm.

`compare` runs the same seeded schedules on two builds (git refs or work trees), each on
a compose project of its own, and compares verdicts and recovery figures
(`chaos.compare.command`): exit 0 when head breaks nothing base holds and is not slower
beyond noise, 1 on a regression, 2 on a set-up error.

`check` judges a recorded run directory again without a cluster, with every invariant
and the history checker; `export-history` writes its workload history as Jepsen's EDN
(`chaos.cli.check`).

`heal` undoes every fault that the heal state of the compose project still holds (left by
a run that was killed, or whose undo failed) and verifies each undo; first it unmounts the
project's disk layers whose container is gone (`harness.disk_layers`). The project defaults
to the repository's compose project: `COMPOSE_PROJECT_NAME`, else the repository
directory's name normalised as compose does. The state directory defaults to
`runs/.chaos-state` of the repository.

Exit codes: `run`, `all`, `replay`: 0 every invariant holds, 1 one is broken, 2 usage or
set-up error (the cluster is not up). `heal`: 0 nothing is left, 1 something could not be
undone (or the state could not be read), 2 bad arguments. `shrink`: 1 when it shrank a
reproduced failure, 0 when the failure did not come back. `check`: 0 nothing broken, 1
something broken or the run directory incomplete, 2 the run could not be read. Each
command is one subparser and one handler in `COMMANDS`.

Runs on the main thread.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from chaos.cli import check, commands
from chaos.cluster.handle import ClusterHandle
from chaos.compare import command as compare_command
from chaos.errors import FaultError, ScheduleError
from chaos.hunt import blind_command, soak_command
from chaos.hunt import command as bugs_command
from chaos.run.heal_state import STATE_DIR, HealStateError, pointer_path, state_files, write_pointer
from chaos.run.injector import Injector
from chaos.run.setup import RunSetupError
from domain.flush import FLUSH_INTERVAL_FLAG, flush_interval
from domain.protocols import INTER_BROKER_PROTOCOL_FLAG, INTER_BROKER_PROTOCOLS
from harness.disk_layers import DiskLayerError, daemons, host_layers, layer_root, stop_orphans

REPO_ROOT = Path(__file__).resolve().parents[1]


def default_project(env: dict[str, str] | None = None, directory: Path = REPO_ROOT) -> str:
    """`COMPOSE_PROJECT_NAME`, else the directory name as compose normalises it
    (lower case; only letters, digits, `-` and `_`; starting with a letter or digit)."""
    env = dict(os.environ) if env is None else env
    if env.get("COMPOSE_PROJECT_NAME"):
        return env["COMPOSE_PROJECT_NAME"]
    name = re.sub(r"[^a-z0-9_-]", "", directory.name.lower())
    return name.lstrip("-_")


def build_parser() -> argparse.ArgumentParser:
    """The parser with one subparser per command."""
    parser = argparse.ArgumentParser(
        prog="python -m chaos", description="Faults on the compose cluster, with verified undo."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_run_commands(commands)
    bugs_command.add_parser(commands)
    blind_command.add_parser(commands)
    soak_command.add_parser(commands)
    compare_command.add_parser(commands)
    check.add_parsers(commands)
    heal = commands.add_parser(
        "heal",
        help="undo every fault the heal state still holds, and verify",
        description="Undo every fault that runs of the project left in effect, and verify "
        "each undo. Exit 0 when nothing is left, 1 when something could not be undone.",
    )
    heal.add_argument(
        "--project",
        default=None,
        help="compose project (default: COMPOSE_PROJECT_NAME or the repository's directory name)",
    )
    heal.add_argument(
        "--state-dir",
        type=Path,
        default=REPO_ROOT / "runs" / STATE_DIR,
        help="where the projects' heal pointers live (default: runs/.chaos-state)",
    )
    return parser


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project",
        default=default_project(),
        help="compose project (default: COMPOSE_PROJECT_NAME or the repository's directory name)",
    )
    parser.add_argument(
        "--runs",
        type=Path,
        default=REPO_ROOT / "runs",
        help="where run directories are created (default: runs/)",
    )
    parser.add_argument("--plain", action="store_true", help="plain progress lines, no live panel")
    parser.add_argument(
        "--keep-topic", action="store_true", help="keep the run's topic (deleted by default)"
    )
    parser.add_argument(
        INTER_BROKER_PROTOCOL_FLAG,
        choices=INTER_BROKER_PROTOCOLS,
        default=None,
        help="refuse to run unless every broker runs this inter-broker protocol: 2.6, leaders "
        "write ISR changes; 2.7, they send AlterIsr (default: whichever the cluster runs)",
    )
    parser.add_argument(
        FLUSH_INTERVAL_FLAG,
        dest="flush_interval",
        type=flush_interval,
        default=None,
        help="refuse to run unless every broker fsyncs its log after this many messages "
        "(1: every append; default: whichever the cluster runs, Kafka's default never)",
    )


def _add_run_commands(commands: Any) -> None:
    commands.add_parser("list", help="the scenarios", description="List the scenarios.")
    run = commands.add_parser(
        "run",
        help="run one scenario on the compose cluster and judge it",
        description="Perform SCENARIO's schedule with the workload running, then judge the "
        "run by the cluster invariants. Exit 0 pass, 1 an invariant broken, 2 set-up error.",
    )
    run.add_argument("scenario", help="a scenario name (`python -m chaos list`)")
    run.add_argument("--seed", type=int, default=None, help="draw the schedule from this seed")
    run.add_argument(
        "--duration", type=float, default=None, help="workload seconds (`random` only)"
    )
    _common(run)
    every = commands.add_parser(
        "all", help="run every scenario, print one table", description="Run every scenario."
    )
    every.add_argument("--seed", type=int, default=1, help="the seed of every run (default 1)")
    every.add_argument("--scenarios", default=None, help="comma-separated subset")
    _common(every)
    replay = commands.add_parser(
        "replay", help="run a recorded schedule again", description="Replay RUN_DIR's schedule."
    )
    replay.add_argument("run_dir", type=Path, help="a run directory with schedule.json")
    _common(replay)
    shrink = commands.add_parser(
        "shrink",
        help="shrink a failing run's schedule (delta debugging)",
        description="Replay ever smaller subsets of RUN_DIR's schedule and print the smallest "
        "that still fails (written to RUN_DIR/shrunk-schedule.json).",
    )
    shrink.add_argument("run_dir", type=Path, help="a failing run directory")
    shrink.add_argument("--max-runs", type=int, default=16, help="most replays to try (default 16)")
    _common(shrink)


def _stop_orphan_layers(project: str) -> None:
    """Unmount the project's disk layers whose broker container is gone."""
    if not host_layers(project) and not daemons(f"{project}/"):
        return
    with ClusterHandle.for_project(project) as cluster:
        services = cluster.services()
    for tag in stop_orphans(layer_root(), project, services):
        print(f"heal: unmounted the disk layer {tag} (its container is gone)")


def heal(args: argparse.Namespace) -> int:
    """Undo what the project's runs left; 0 when nothing is left."""
    project = args.project or default_project()
    try:
        _stop_orphan_layers(project)
    except (DiskLayerError, FaultError) as exc:
        print(f"heal: {exc}", file=sys.stderr)
        return 1
    try:
        files = state_files(args.state_dir, project)
    except HealStateError as exc:
        print(f"heal: {exc}", file=sys.stderr)
        return 1
    if not files:
        print(f"heal: nothing to heal for project {project}")
        return 0
    present = [f for f in files if f.exists()]
    if len(present) < len(files):
        write_pointer(pointer_path(args.state_dir, project), project, present)
        print(f"heal: dropped {len(files) - len(present)} state file(s) that no longer exist")
    if not present:
        print(f"heal: project {project}: nothing left")
        return 0
    left = 0
    try:
        with ClusterHandle.for_project(project) as cluster:
            if not cluster.services():
                listed = ", ".join(map(str, present))
                print(f"heal: project {project} has no containers (is it up?); kept {listed}")
                return 1
            for state_file in present:
                injector = Injector(cluster, state_file.parent, state_dir=args.state_dir)
                try:
                    for outcome in injector.heal_all():
                        word = "undone" if outcome.ok else "NOT UNDONE"
                        kind = outcome.fault.kind if outcome.fault else "?"
                        print(f"heal: {outcome.fault_id} {kind} {word}: {outcome.check.detail}")
                        left += 0 if outcome.ok else 1
                finally:
                    injector.close()
    except (FaultError, HealStateError) as exc:
        print(f"heal: {exc}", file=sys.stderr)
        return 1
    print(f"heal: project {project}: " + (f"{left} fault(s) left" if left else "nothing left"))
    return 1 if left else 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "list": commands.list_scenarios,
    "run": commands.run_scenario,
    "all": commands.run_all,
    "replay": commands.replay,
    "shrink": commands.shrink_run,
    "heal": heal,
    "check": check.check,
    "export-history": check.export_history,
    "bugs": lambda args: bugs_command.hunt_bugs(args, default_project()),
    "hunt": lambda args: blind_command.hunt_blind(args, default_project()),
    "soak": lambda args: soak_command.soak_fixed(args, default_project()),
    "compare": lambda args: compare_command.compare_builds(args, default_project()),
}


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` and run its command; the exit code. A SIGTERM (`kill <pid>`, a
    supervisor stopping the job) interrupts the command as Ctrl-C does, so the run in
    progress heals its faults before the process exits."""
    args = build_parser().parse_args(argv)
    on_main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, _interrupt) if on_main else None
    try:
        return COMMANDS[args.command](args)
    except (
        commands.UsageError,
        bugs_command.HuntUsageError,
        compare_command.CompareUsageError,
    ) as exc:
        print(f"python -m chaos {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (RunSetupError, ScheduleError) as exc:
        print(f"python -m chaos {args.command}: cannot run: {exc}", file=sys.stderr)
        return 2
    except FaultError as exc:
        print(f"python -m chaos {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"python -m chaos {args.command}: interrupted; faults were healed", file=sys.stderr)
        return 130
    finally:
        if on_main:
            signal.signal(signal.SIGTERM, before)


if __name__ == "__main__":
    sys.exit(main())
