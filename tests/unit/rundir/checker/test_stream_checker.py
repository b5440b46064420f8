"""The streaming checker (`check_stream`, `check_files`) gives the verdict of `check` over the
whole history: on random histories full of anomalies of every class (values and offsets
drawn from small pools, so that values repeat, offsets clash, sends fail and are read
anyway, polls skip and go back, acknowledgements arrive after the final read began, a
partition goes unread), with the final read given or rebuilt from the history's files;
and when the files cannot be streamed (one goes back in time, the final read's process
writes into another file), by falling back to reading them whole."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import TopicPartition
from rundir.checker import (
    FinalRead,
    QueuePolicy,
    check,
    check_files,
    check_stream,
    final_read_from_history,
    parts,
)
from rundir.checker.final_index import final_index_of
from rundir.history import (
    FINAL_READ_PROCESS,
    Completion,
    HistoryOp,
    OpF,
    history_path,
    read_history,
)
from rundir.results import RunVerdict

PROPERTY = settings(max_examples=150, deadline=None)
TOPIC = "t"
PROCESSES = ("p0", "p1", "c0", "c1")


class _Clock:
    def __init__(self, rng: random.Random) -> None:
        self.rng, self.t = rng, 1000

    def tick(self) -> int:
        self.t += self.rng.choice((0, 1, 1, 2))  # ties happen: the merge keeps file order
        return self.t


def _random_history(rng: random.Random, steps: int) -> list[HistoryOp]:
    """Interleaved invokes and completions of sends and polls by a few processes, then
    the final read's polls of most partitions."""
    clock = _Clock(rng)
    ops: list[HistoryOp] = []
    pending: dict[str, HistoryOp] = {}
    op_ids = dict.fromkeys((*PROCESSES, FINAL_READ_PROCESS), 0)

    def value() -> str:
        return f"v{rng.randrange(10)}"

    for _ in range(steps):
        process = rng.choice(PROCESSES)
        invoke = pending.pop(process, None)
        if invoke is None:
            f: OpF = "send" if process.startswith("p") else "poll"
            op = HistoryOp(
                "invoke",
                f,
                process,
                clock.tick(),
                0,
                TOPIC,
                rng.randrange(3),
                rng.choice((None, rng.randrange(8))) if f == "poll" else None,
                value() if f == "send" else None,
                None,
                op_ids[process],
                rng.choice((-1, -1, -1, 1)) if f == "send" else None,
            )
            op_ids[process] += 1
            ops.append(op)
            pending[process] = op
            continue
        ops.append(_completion(rng, invoke, clock.tick(), value))
    # some sends stay open: their producer died
    ops.extend(_final_polls(rng, clock, op_ids[FINAL_READ_PROCESS], value))
    return ops


def _completion(rng: random.Random, invoke: HistoryOp, t: int, value: object) -> HistoryOp:
    if invoke.f == "send":
        outcome: Completion = rng.choice(("ok", "ok", "ok", "fail", "info"))
        offset = rng.choice((None, *range(8))) if outcome != "fail" else None
        return invoke._replace(
            type=outcome,
            time_ns=t,
            offset=offset,
            attempts=1,
            attempts_unknown=rng.choice((0, 0, 0, 1, 2)),
        )
    if rng.random() < 0.1:
        return invoke._replace(type="fail", time_ns=t, error="ERROR", attempts=1)
    start = invoke.offset if invoke.offset is not None else rng.randrange(8)
    records = []
    offset = start + rng.choice((0, 0, 0, 1, -1))
    for _ in range(rng.randrange(4)):
        records.append((offset, value() if callable(value) else "v"))
        offset += rng.choice((1, 1, 1, 2, 0, -1))
    return invoke._replace(
        type="ok", time_ns=t, offset=rng.randrange(10), attempts=1, records=tuple(records)
    )


def _final_polls(
    rng: random.Random, clock: _Clock, op_id: int, value: object
) -> Iterator[HistoryOp]:
    for partition in range(3):
        if rng.random() < 0.15:
            continue  # a partition the final read does not cover
        target = rng.randrange(8)
        fetch = 0
        for _ in range(rng.choice((1, 1, 2))):
            invoke = HistoryOp(
                "invoke", "poll", FINAL_READ_PROCESS, clock.tick(), 0, TOPIC, partition,
                fetch, None, None, op_id,
            )  # fmt: skip
            op_id += 1
            count = rng.randrange(target + 2)
            records = tuple((fetch + i, value() if callable(value) else "v") for i in range(count))
            yield invoke
            yield invoke._replace(
                type="ok", time_ns=clock.tick(), offset=target, attempts=1, records=records
            )
            fetch += count


def _random_final(rng: random.Random, ops: list[HistoryOp]) -> FinalRead:
    """A final read given apart: random records, begun at some point of the history."""
    partitions = {
        TopicPartition(TOPIC, p): tuple(
            (o, f"v{rng.randrange(10)}") for o in range(rng.randrange(9)) if rng.random() < 0.9
        )
        for p in range(3)
        if rng.random() < 0.85
    }
    return FinalRead(rng.choice(ops).time_ns if ops else 0, partitions)


def _write(tmp_path: Path, ops: list[HistoryOp]) -> list[Path]:
    paths: dict[str, Path] = {}
    files: dict[Path, list[str]] = {}
    for op in ops:
        path = paths.setdefault(op.process, history_path(tmp_path, op.process))
        files.setdefault(path, []).append(op.to_json())
    for path, lines in files.items():
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return sorted(paths.values())


@PROPERTY
@given(seed=st.integers(0, 2**32), unclean=st.booleans())
def test_streaming_a_random_history_gives_the_verdict_of_the_whole_history(
    seed: int, unclean: bool
) -> None:
    rng = random.Random(seed)
    ops = _random_history(rng, rng.randrange(80))
    final = _random_final(rng, ops)
    policy = QueuePolicy(unclean_leader_election=unclean)

    assert check_stream(iter(ops), final, policy) == check(ops, final, policy)
    rebuilt = final_read_from_history(ops, FINAL_READ_PROCESS)
    assert check_stream(iter(ops), rebuilt, policy) == check(ops, rebuilt, policy)


def test_the_random_histories_hold_anomalies_of_every_class() -> None:
    """The property above is worth something: over a few seeds, every class fires."""
    fired: set[str] = set()
    for seed in range(40):
        rng = random.Random(seed)
        ops = _random_history(rng, 80)
        verdict = check_stream(iter(ops), _random_final(rng, ops))
        fired |= {r.name for r in verdict.results if r.violations}
    assert fired >= {
        "lost_writes", "duplicates", "failed_writes_read", "unexpected_values",
        "vanished_reads", "reordering", "offsets_monotonic", "inconsistent-offsets",
        "duplicate", "lost-write", "unseen", "G1a", "poll-skip", "int-poll-skip",
        "nonmonotonic-poll", "int-nonmonotonic-poll", "nonmonotonic-send",
    }  # fmt: skip


@pytest.mark.parametrize("seed", range(12))
def test_checking_the_files_as_they_are_read_gives_the_verdict_of_reading_them_whole(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    ops = _random_history(rng, 150)
    paths = _write(tmp_path, ops)
    whole = read_history(paths)
    expected = check(whole, final_read_from_history(whole, FINAL_READ_PROCESS))

    assert check_files(paths) == expected
    given = _random_final(rng, ops)
    assert check_files(paths, given) == check(whole, given)


def test_a_file_that_goes_back_in_time_is_read_whole_with_the_same_verdict(
    tmp_path: Path,
) -> None:
    rng = random.Random(7)
    ops = _random_history(rng, 150)
    paths = _write(tmp_path, ops)
    lines = paths[0].read_text(encoding="utf-8").splitlines()
    lines[0], lines[-1] = lines[-1], lines[0]
    paths[0].write_text("\n".join(lines) + "\n", encoding="utf-8")
    whole = read_history(paths)

    verdict = check_files(paths)

    assert verdict == check(whole, final_read_from_history(whole, FINAL_READ_PROCESS))


def test_final_read_lines_in_another_file_are_read_whole_with_the_same_verdict(
    tmp_path: Path,
) -> None:
    rng = random.Random(3)
    ops = _random_history(rng, 150)
    paths = _write(tmp_path, ops)
    stray = next(op for op in ops if op.process == FINAL_READ_PROCESS)._replace(op_id=999)
    with paths[0].open("a", encoding="utf-8") as file:
        file.write(stray._replace(time_ns=ops[-1].time_ns + 1).to_json() + "\n")
    whole = read_history(paths)

    verdict = check_files(paths)

    assert verdict == check(whole, final_read_from_history(whole, FINAL_READ_PROCESS))
    assert verdict.op_counts["poll invoke"] == sum(
        1 for op in whole if op.f == "poll" and op.type == "invoke"
    )


@PROPERTY
@given(seed=st.integers(0, 2**32))
def test_the_final_read_rebuilt_from_its_process_alone_is_the_history_s(seed: int) -> None:
    rng = random.Random(seed)
    ops = _random_history(rng, rng.randrange(120))
    expected = final_read_from_history(ops, FINAL_READ_PROCESS)

    rebuilt, lines = final_index_of(iter(ops), FINAL_READ_PROCESS)

    assert rebuilt.started_ns == expected.started_ns
    assert list(rebuilt.partitions) == list(expected.partitions)
    assert {tp: tuple(r) for tp, r in rebuilt.partitions.items()} == expected.partitions
    assert lines == sum(1 for op in ops if op.process == FINAL_READ_PROCESS)


def _buckets_of(paths: list[Path], buckets: int) -> int:
    """The `bucket_bytes` that splits `paths` into `buckets` buckets."""
    return sum(p.stat().st_size for p in paths) // buckets + 1


class _Collections:
    """Stands in for the `gc` module in `rundir.checker.parts`: counts the full collections
    asked for between buckets. A real one walks every object of the test process, which
    in the unit tier holds hundreds of megabytes: most of this test's time went there."""

    def __init__(self) -> None:
        self.asked = 0

    def collect(self) -> int:
        self.asked += 1
        return 0


@pytest.mark.parametrize("seed", range(24))
def test_judging_the_files_a_bucket_of_partitions_at_a_time_gives_the_whole_verdict(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged: list[int] = []
    spied = _spy(judged, parts.check_in_parts)
    monkeypatch.setattr("rundir.checker.stream.check_in_parts", spied)
    collector = _Collections()
    monkeypatch.setattr(parts, "gc", collector)
    rng = random.Random(seed)
    ops = _random_history(rng, 150)
    paths = _write(tmp_path, ops)
    whole = read_history(paths)
    final = final_read_from_history(whole, FINAL_READ_PROCESS)

    for policy in (QueuePolicy(), QueuePolicy(unclean_leader_election=True)):
        expected = check(whole, final, policy)
        for buckets in (2, 3):
            size = _buckets_of(paths, buckets)
            verdict = check_files(paths, policy=policy, bucket_bytes=size, scratch=tmp_path)
            assert verdict == expected
            assert verdict.stats == expected.stats  # the unseen count, replayed in order
    assert judged == [2, 3, 2, 3]
    assert collector.asked == sum(judged)  # the state dropped after every bucket
    assert [p.name for p in tmp_path.iterdir() if p.is_dir()] == []  # the spill is gone


def _spy(calls: list[int], real: Callable[..., RunVerdict]) -> Callable[..., RunVerdict]:
    def spied(paths: list[Path], buckets: int, *args: object) -> RunVerdict:
        calls.append(buckets)
        return real(paths, buckets, *args)

    return spied


def test_a_file_that_goes_back_in_time_in_one_bucket_is_read_whole_with_the_same_verdict(
    tmp_path: Path,
) -> None:
    rng = random.Random(7)
    ops = _random_history(rng, 150)
    paths = _write(tmp_path, ops)
    lines = paths[0].read_text(encoding="utf-8").splitlines()
    lines[0], lines[-1] = lines[-1], lines[0]
    paths[0].write_text("\n".join(lines) + "\n", encoding="utf-8")
    whole = read_history(paths)

    verdict = check_files(paths, bucket_bytes=_buckets_of(paths, 3))

    assert verdict == check(whole, final_read_from_history(whole, FINAL_READ_PROCESS))


def test_final_read_lines_in_another_file_are_found_by_the_buckets_too(tmp_path: Path) -> None:
    rng = random.Random(3)
    ops = _random_history(rng, 150)
    paths = _write(tmp_path, ops)
    stray = next(op for op in ops if op.process == FINAL_READ_PROCESS)._replace(op_id=999)
    with paths[0].open("a", encoding="utf-8") as file:
        file.write(stray._replace(time_ns=ops[-1].time_ns + 1).to_json() + "\n")
    whole = read_history(paths)

    verdict = check_files(paths, bucket_bytes=_buckets_of(paths, 3))

    assert verdict == check(whole, final_read_from_history(whole, FINAL_READ_PROCESS))
