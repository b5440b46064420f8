"""The checker benchmark's history generator: a small history reads back whole with the
mix asked for, is the same for the same seed, and is clean for the history checker."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bench.checker.generator import Mix, write_history
from rundir.checker import check, final_read_from_history
from rundir.history import FINAL_READ_PROCESS, history_files, read_history


def test_a_small_history_reads_back_with_every_process_and_outcome(tmp_path: Path) -> None:
    seen: list[int] = []
    made = write_history(tmp_path / "h", 5_000, seed=3, progress=seen.append)
    ops = read_history(made.paths)
    assert len(ops) == made.operations
    assert 5_000 <= made.operations < 5_000 + Mix().max_batch * Mix().producers
    assert seen[-1] == made.operations
    assert {p.name for p in history_files(tmp_path / "h")} == {
        "producer-0.jsonl",
        "producer-1.jsonl",
        "producer-2.jsonl",
        "producer-3.jsonl",
        "consumer.jsonl",
        f"{FINAL_READ_PROCESS}.jsonl",
    }
    counts = Counter((op.f, op.type) for op in ops)
    assert counts == Counter(made.counts)
    assert {t for f, t in counts if f == "send"} == {"invoke", "ok", "fail", "info"}
    # one value left open: its producer died before the completion
    assert (
        counts[("send", "invoke")]
        == sum(n for (f, t), n in counts.items() if f == "send" and t != "invoke")
        + Mix().open_sends
    )
    assert [op.time_ns for op in ops] == sorted({op.time_ns for op in ops})


def test_the_mix_asked_for_shows_in_the_outcomes(tmp_path: Path) -> None:
    mix = Mix(producers=2, partitions=8, fail_rate=0.3, info_rate=0.0, poll_rate=0.5)
    made = write_history(tmp_path / "h", 20_000, seed=1, mix=mix)
    ops = read_history(made.paths)
    sends = [op for op in ops if op.f == "send" and op.type != "invoke"]
    failed = sum(op.type == "fail" for op in sends) / len(sends)
    assert 0.2 < failed < 0.4
    assert not any(op.type == "info" for op in sends)
    assert {op.process for op in ops} == {"producer-0", "producer-1", "consumer", "final-read"}
    assert {op.partition for op in ops} == set(range(8))
    polls = sum(op.f == "poll" and op.process == "consumer" for op in ops) / 2
    assert 0.4 < polls / (polls + len(sends) / 3) < 0.7


def test_the_same_seed_writes_the_same_history_and_another_seed_another(tmp_path: Path) -> None:
    def text(name: str, seed: int) -> dict[str, str]:
        made = write_history(tmp_path / name, 3_000, seed=seed)
        return {p.name: p.read_text() for p in made.paths}

    assert text("a", 7) == text("b", 7)
    assert text("a2", 7) != text("c", 8)


def test_the_generated_history_is_clean_and_its_final_read_covers_every_partition(
    tmp_path: Path,
) -> None:
    mix = Mix(partitions=16, final_read_batch=40)
    made = write_history(tmp_path / "h", 8_000, seed=5, mix=mix)
    ops = read_history(made.paths)
    final = final_read_from_history(ops, FINAL_READ_PROCESS)
    assert len(final.partitions) == 16
    assert sum(len(r) for r in final.partitions.values()) == made.log_records
    verdict = check(ops, final)
    assert verdict.ok, verdict


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ({"producers": 0}, "producers must be at least 1"),
        ({"fail_rate": 0.7, "info_rate": 0.5}, "must not exceed 1"),
        ({"poll_rate": 1.5}, "between 0 and 1"),
        ({"final_read_batch": 0}, "final_read_batch"),
    ],
)
def test_a_bad_mix_is_refused(bad: dict[str, float], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        Mix(**bad)  # type: ignore[arg-type]


def test_too_few_operations_for_the_partitions_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 640"):
        write_history(tmp_path / "h", 100)
    assert not (tmp_path / "h").exists()
