"""`Settings`: the one frozen settings type of every benchmark run, with the options only
one benchmark has in its own frozen value (`FailoverOptions`, `ProduceOptions`).

Built once at the edge by `bench.arguments.parse_settings`; nothing else reads the command
line. Pure values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from bench.layout import ClusterLayout

REPO_ROOT = Path(__file__).resolve().parents[1]
#: Where every run's JSON lines go unless `--results` says otherwise.
DEFAULT_RESULTS_DIR = REPO_ROOT / "bench" / "results"
FAILOVER = "failover"
PRODUCE = "produce"
SUITE = "all"
BENCHMARKS = (FAILOVER, PRODUCE, SUITE)


@dataclass(frozen=True, slots=True)
class FailoverOptions:
    """What only the failover benchmark asks for."""

    topics: int = 100
    rounds: int = 2
    floor_repetitions: int = 3
    write_floor: bool = True


@dataclass(frozen=True, slots=True)
class ProduceOptions:
    """What only the produce benchmark asks for."""

    replication_factor: int = 3
    duration_s: float = 10.0
    producers: int = 4
    batch: int = 100
    value_bytes: int = 100
    floor_s: float = 3.0
    warmup_calls: int = 500
    produce_timeout_ms: int = 5000
    topic: str = "bench-produce"


@dataclass(frozen=True, slots=True)
class SuiteOptions:
    """What `make bench` measures: failover at each of `sizes` partitions, broker failure
    and controlled shutdown at `scenario_partitions`, topic creation of
    `creation_topics` x `creation_partitions`, and produce (`produce`, unless None). The
    failover at up to `LONG_MEASURE_PARTITIONS` partitions, broker failure and controlled
    shutdown run `runs` times each; their rows are the median run."""

    sizes: tuple[int, ...] = (1_000, 10_000)
    scenario_partitions: int = 10_000
    runs: int = 3
    topics: int = 100
    creation_topics: int = 1_000
    creation_partitions: int = 10
    floor_repetitions: int = 3
    profile: bool = True
    produce: ProduceOptions | None = ProduceOptions()


OptionsT = TypeVar("OptionsT", FailoverOptions, ProduceOptions, SuiteOptions)


@dataclass(frozen=True, slots=True)
class Settings:
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
    options: FailoverOptions | ProduceOptions | SuiteOptions
    #: The brokers serve, and the benchmark calls, mutual TLS with this directory's
    #: certificates; None: plaintext.
    tls_dir: Path | None = None

    @property
    def broker_ids(self) -> list[int]:
        """1..brokers."""
        return list(range(1, self.brokers + 1))

    def options_of(self, kind: type[OptionsT]) -> OptionsT:
        """The benchmark's own options; `TypeError` if this run is another benchmark's."""
        if not isinstance(self.options, kind):
            raise TypeError(f"a {self.benchmark} run has no {kind.__name__}")
        return self.options

    @property
    def failover(self) -> FailoverOptions:
        """The failover benchmark's options."""
        return self.options_of(FailoverOptions)

    @property
    def produce(self) -> ProduceOptions:
        """The produce benchmark's options."""
        return self.options_of(ProduceOptions)

    @property
    def suite(self) -> SuiteOptions:
        """The suite's options."""
        return self.options_of(SuiteOptions)

    @property
    def layout(self) -> ClusterLayout:
        """The failover benchmark's synthetic cluster (`ValueError` if it cannot exist)."""
        return ClusterLayout(self.partitions, self.failover.topics, self.brokers)


PIPELINE = "pipeline"


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    """The pipeline benchmark (`bench.pipeline`): no ZooKeeper or brokers, only synthetic
    run directories and one Spark session. `events` is the records to generate (event-log
    lines, history lines, fault phases, snapshots); `out` holds the runs and `bench.json`."""

    events: int
    out: Path
    results_dir: Path
    master: str
    seed: int = 0
    keep_runs: bool = False
