"""The benchmarks' command line: the options every benchmark shares, declared once here,
and each family's own options declared in its `Command`, turned once into `Settings`.

    python -m bench.failover [options]     python -m bench failover [options]
    python -m bench.produce [options]      python -m bench produce [options]
                                           python -m bench all [options]

Options every cluster benchmark has: `--partitions`, `--brokers`, `--session-timeout-ms`,
`--timeout`, `--tls-dir`, `--out`, `--results`, and `--quick` where the family has a quick
form; each family adds its own and validates them (`bench.control.options`: `--topics`,
`--rounds`... for failover, `--runs`... for the suite; `bench.produce.options`:
`--duration`, `--producers`...). The pipeline benchmark, which starts no cluster, takes
`--quick`, `--out` and `--results` from here (`bench.pipeline.options`). A bad value ends
the process with a usage line, `<prog>: error: <what is wrong>` and exit code 2
(argparse). Main thread.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic

from bench.shared.settings import DEFAULT_RESULTS_DIR, REPO_ROOT, OptionsT, Settings
from security.tls_files import DEFAULT_TLS_DIR, tls_dir_choice

#: The ensemble's session-timeout bounds (`minSessionTimeout`/`maxSessionTimeout`).
SESSION_TIMEOUT_RANGE_MS = (1000, 60000)


def _given_partitions(args: argparse.Namespace, options: Any) -> int:
    """The cluster size is `--partitions` as given."""
    partitions: int = args.partitions
    return partitions


@dataclass(frozen=True, slots=True)
class Command(Generic[OptionsT]):
    """One benchmark's command line, declared by its family: its name, what it does, the
    defaults of the shared options, its own options (`add_options`) and their validation
    into its options value (`options`; `ValueError` names the first bad value).

    `partitions` is `--partitions`' default; None: the option is optional (`partitions_help`
    says what it adds) and `size` computes the cluster size from the options. `quick_help`,
    when set, adds `--quick`."""

    name: str
    description: str
    partitions: int | None
    timeout_s: float
    out_prefix: str
    add_options: Callable[[argparse.ArgumentParser], None]
    options: Callable[[argparse.Namespace], OptionsT]
    partitions_help: str | None = None
    quick_help: str | None = None
    size: Callable[[argparse.Namespace, OptionsT], int] = field(default=_given_partitions)


def add_quick(parser: argparse.ArgumentParser, help_text: str) -> None:
    """`--quick`: a small, fast form of the benchmark."""
    parser.add_argument("--quick", action="store_true", help=help_text)


def add_output(parser: argparse.ArgumentParser, out_prefix: str) -> None:
    """`--out` (the run's directory) and `--results` (the JSON lines' directory)."""
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"output directory (default runs/{out_prefix}-<UTC time>)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=DEFAULT_RESULTS_DIR,
        help="where latest.jsonl and its dated copy go (default bench/results)",
    )


def output_dir(given: Path | None, out_prefix: str) -> Path:
    """`--out`, or a new directory `runs/<out_prefix>-<UTC time>`."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return given or REPO_ROOT / "runs" / f"{out_prefix}-{stamp}"


def _add_shared(parser: argparse.ArgumentParser, command: Command[Any]) -> None:
    if command.partitions is None:
        parser.add_argument("--partitions", type=int, default=None, help=command.partitions_help)
    else:
        parser.add_argument(
            "--partitions",
            type=int,
            default=command.partitions,
            help=f"default {command.partitions}",
        )
    parser.add_argument("--brokers", type=int, default=3, help="broker processes (default 3)")
    parser.add_argument(
        "--session-timeout-ms",
        type=int,
        default=6000,
        help="brokers' ZooKeeper session timeout (default 6000)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=command.timeout_s,
        help=f"deadline in seconds for each wait (default {command.timeout_s:g})",
    )
    add_output(parser, command.out_prefix)
    parser.add_argument(
        "--tls-dir",
        default=os.environ.get("TLS_DIR"),
        help="brokers and benchmark speak mutual TLS with the certificates in this directory "
        "(TLS_DIR; default .secrets/tls when it exists; 'off': plaintext)",
    )
    if command.quick_help is not None:
        add_quick(parser, command.quick_help)


def _fill(parser: argparse.ArgumentParser, command: Command[Any]) -> argparse.ArgumentParser:
    _add_shared(parser, command)
    command.add_options(parser)
    parser.set_defaults(benchmark=command.name)
    return parser


def build_parser(command: Command[Any]) -> argparse.ArgumentParser:
    """The command line of one benchmark, as `python -m bench.<benchmark>`."""
    return _fill(
        argparse.ArgumentParser(
            prog=f"python -m bench.{command.name}", description=command.description
        ),
        command,
    )


def build_main_parser(
    commands: Sequence[Command[Any]],
) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """`python -m bench <benchmark> ...`, and each benchmark's subparser by name."""
    parser = argparse.ArgumentParser(
        prog="python -m bench", description="Benchmarks against floors measured in the same run."
    )
    subcommands = parser.add_subparsers(dest="command", metavar="benchmark", required=True)
    subparsers = {
        c.name: _fill(
            subcommands.add_parser(c.name, help=c.description, description=c.description), c
        )
        for c in commands
    }
    return parser, subparsers


def parse_command(command: Command[OptionsT], argv: Sequence[str] | None) -> Settings[OptionsT]:
    """`python -m bench.<benchmark>`: one benchmark's settings from `argv`. Bad values exit
    with code 2 and say what is wrong."""
    parser = build_parser(command)
    args = parser.parse_args(argv)
    try:
        return settings_of(command, args)
    except ValueError as exc:
        parser.error(str(exc))


def parse_subcommand(
    commands: Mapping[str, Command[Any]], argv: Sequence[str] | None
) -> Settings[Any]:
    """`python -m bench <benchmark>`: the benchmark named by the first argument, then its
    settings. Bad values exit with code 2 and say what is wrong."""
    main, subparsers = build_main_parser(list(commands.values()))
    args = main.parse_args(argv)
    try:
        return settings_of(commands[args.benchmark], args)
    except ValueError as exc:
        subparsers[args.benchmark].error(str(exc))


def settings_of(command: Command[OptionsT], args: argparse.Namespace) -> Settings[OptionsT]:
    """Validate `args` into `Settings`; `ValueError` names the first bad value."""
    out = output_dir(args.out, command.out_prefix)
    if (out / "events").exists() or (out / "bench.json").exists():
        raise ValueError(f"{out} already holds a run; choose another --out")
    if args.brokers < 1:
        raise ValueError("--brokers must be at least 1")
    if command.partitions is not None and args.partitions < 1:
        raise ValueError("--partitions must be at least 1")
    low, high = SESSION_TIMEOUT_RANGE_MS
    if not low <= args.session_timeout_ms <= high:
        raise ValueError(f"--session-timeout-ms must be within {low}..{high}")
    if args.timeout <= 0:
        raise ValueError("--timeout must be positive")
    options = command.options(args)
    return Settings(
        benchmark=command.name,
        partitions=command.size(args, options),
        brokers=args.brokers,
        session_timeout_ms=args.session_timeout_ms,
        timeout_s=args.timeout,
        out=out.resolve(),  # the ZooKeeper JVMs run in their own directories
        results_dir=args.results.resolve(),
        options=options,
        tls_dir=_tls_dir(args.tls_dir),
    )


def _tls_dir(raw: str | None) -> Path | None:
    found = tls_dir_choice(raw, REPO_ROOT / DEFAULT_TLS_DIR)
    if found is not None and not found.is_dir():
        raise ValueError(f"--tls-dir {found} is not a directory (run `make setup`)")
    return found.resolve() if found is not None else None
