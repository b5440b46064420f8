"""`Settings`: the one frozen settings type of every cluster benchmark run, generic over
the options only one benchmark has, which each family declares in its own frozen value
(`bench.control.options`: `FailoverOptions`, `SuiteOptions`; `bench.produce.options`:
`ProduceOptions`).

Built once at the edge by `bench.shared.arguments`; nothing else reads the command line.
Pure values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Where every run's JSON lines go unless `--results` says otherwise.
DEFAULT_RESULTS_DIR = REPO_ROOT / "bench" / "results"

OptionsT = TypeVar("OptionsT", bound="DataclassInstance")
KindT = TypeVar("KindT")
OtherT = TypeVar("OtherT", bound="DataclassInstance")


@dataclass(frozen=True, slots=True)
class Settings(Generic[OptionsT]):
    """One run: which benchmark, its cluster, its deadlines, where it writes, its options.

    `out` holds the run's logs, events and `bench.json`; `results_dir` the JSON lines
    (`latest.jsonl` and a dated copy)."""

    benchmark: str
    partitions: int
    brokers: int
    session_timeout_ms: int
    timeout_s: float
    out: Path
    results_dir: Path
    options: OptionsT
    #: The brokers serve, and the benchmark calls, mutual TLS with this directory's
    #: certificates; None: plaintext.
    tls_dir: Path | None = None

    @property
    def broker_ids(self) -> list[int]:
        """1..brokers."""
        return list(range(1, self.brokers + 1))

    def options_of(self, kind: type[KindT]) -> KindT:
        """The benchmark's own options; `TypeError` if this run is another benchmark's."""
        if not isinstance(self.options, kind):
            raise TypeError(f"a {self.benchmark} run has no {kind.__name__}")
        return self.options

    def step(self, benchmark: str, options: OtherT, partitions: int, out: Path) -> Settings[OtherT]:
        """The same cluster, deadlines and results for another benchmark's options: a step
        of the suite."""
        return Settings(
            benchmark=benchmark,
            partitions=partitions,
            brokers=self.brokers,
            session_timeout_ms=self.session_timeout_ms,
            timeout_s=self.timeout_s,
            out=out,
            results_dir=self.results_dir,
            options=options,
            tls_dir=self.tls_dir,
        )
