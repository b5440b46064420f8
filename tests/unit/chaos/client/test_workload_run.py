"""`run_workload` and `python -m chaos.workload` against an in-process cluster: a correct
cluster passes, a broker that acknowledges without appending fails, and every bad argument
is refused with exit code 2. Runs are bounded by `max_sends`, so nothing waits on time."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

import pytest

from chaos import workload
from chaos.client.workload_run import Progress, WorkloadConfig, judge, run_workload
from chaos.testing import FakeBrokers
from client import Client
from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors
from rundir.history import read_history


class LyingBrokers(FakeBrokers):
    """Acknowledges every third Produce without appending it."""

    def __init__(self) -> None:
        super().__init__("t", 2)
        self._produces = 0

    def produce(self, address: str, request: m.ProduceRequest) -> m.ProduceResponse:
        self._produces += 1
        if self._produces % 3 == 0:
            (entry,) = request.partitions
            offset = len(self.logs[entry.partition]) + 1000
            last = offset + len(entry.records) - 1
            return m.ProduceResponse(
                (m.PartitionProduceResult(entry.topic, entry.partition, Errors.NONE, offset, last),)
            )
        return super().produce(address, request)


def _config(**changes: Any) -> WorkloadConfig:
    base = WorkloadConfig(
        topic="t",
        partitions=2,
        duration_s=60.0,
        producers=2,
        rate_per_s=1e6,
        max_sends=30,
        final_read_timeout_s=5.0,
    )
    return dataclasses.replace(base, **changes)


def test_a_correct_cluster_passes(tmp_path: Path) -> None:
    brokers = FakeBrokers("t", 2)
    cluster = Client(["broker2:9092"], topics=("t",), connect=brokers.connect)
    seen: list[Progress] = []

    result = run_workload(cluster, _config(batch=4), tmp_path, progress=seen.append)

    assert result.thread_errors == ()
    assert result.counts["send ok"] == 60
    assert sorted(p.name for p in result.history_paths) == [
        "consumer.jsonl",
        "final-read.jsonl",
        "producer-0.jsonl",
        "producer-1.jsonl",
    ]
    assert sum(len(r) for r in result.final_read.partitions.values()) == 60
    verdict = judge(result)
    assert verdict.ok, verdict.report()
    assert seen
    assert seen[-1].counts["send ok"] == 60
    assert "send ok 60 fail 0 info 0 | poll ok " in seen[-1].line()
    values = {op.value for op in read_history(result.history_paths) if op.type == "ok"}
    assert {"producer-0-0", "producer-1-29"} <= values


def test_a_broker_acknowledging_without_appending_fails_the_verdict(tmp_path: Path) -> None:
    brokers = LyingBrokers()
    cluster = Client(["broker1:9092"], topics=("t",), connect=brokers.connect)

    verdict = judge(run_workload(cluster, _config(producers=1, max_sends=9), tmp_path))

    assert not verdict.ok
    assert len(verdict.result("lost_writes").violations) == 3


def test_a_set_stop_event_ends_the_load_at_once(tmp_path: Path) -> None:
    brokers = FakeBrokers("t", 2)
    cluster = Client(["broker1:9092"], connect=brokers.connect)
    stop = threading.Event()
    stop.set()
    result = run_workload(cluster, _config(max_sends=None), tmp_path, stop)
    assert judge(result).ok
    assert set(result.final_read.partitions) == {TopicPartition("t", 0), TopicPartition("t", 1)}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"partitions": 0}, "partitions must be at least 1"),
        ({"duration_s": 0}, "duration must be positive"),
        ({"producers": 0}, "producers must be 1..64"),
        ({"rate_per_s": -1}, "rate must be positive"),
        ({"batch": 0}, "batch must be 1..1000"),
        ({"acks": 0}, "acks must be -1"),
        ({"timeout_ms": 0}, "timeout-ms must be positive"),
        ({"final_read_timeout_s": 0}, "final read timeout must be positive"),
        ({"max_sends": 0}, "max sends must be at least 1"),
        ({"topic": "a b"}, "illegal"),
    ],
)
def test_config_refuses_bad_values(change: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _config(**change)


# -- command line ------------------------------------------------------------------------


def _argv(history_dir: Path, *extra: str) -> list[str]:
    return [
        "--brokers",
        "127.0.0.1:9091",
        "--address-map",
        "broker1:9092=127.0.0.1:9091",
        "--topic",
        "t",
        "--partitions",
        "2",
        "--history-dir",
        str(history_dir),
        *extra,
    ]


@pytest.fixture
def fake_cluster(monkeypatch: pytest.MonkeyPatch) -> FakeBrokers:
    """Connect the CLI to an in-process cluster whose broker 1 is 127.0.0.1:9091."""
    brokers = FakeBrokers("t", 2, reachable={1: "127.0.0.1:9091", 2: "h:2", 3: "h:3"})
    monkeypatch.setattr(workload, "grpc_connect", lambda timeout_s, tls=None: brokers.connect)
    return brokers


def test_the_cli_prints_an_ok_verdict_and_exits_0(
    tmp_path: Path, fake_cluster: FakeBrokers, capsys: pytest.CaptureFixture[str]
) -> None:
    code = workload.main(_argv(tmp_path / "h", "--max-sends", "10", "--rate", "100000"))
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert out.out.startswith("verdict: OK")
    assert "send ok 20" in out.err  # the last progress line


def test_the_cli_exits_1_when_the_verdict_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    brokers = LyingBrokers()
    brokers.reachable[1] = "127.0.0.1:9091"
    monkeypatch.setattr(workload, "grpc_connect", lambda timeout_s, tls=None: brokers.connect)
    code = workload.main(_argv(tmp_path / "h", "--max-sends", "6", "--rate", "100000"))
    assert code == 1
    assert "verdict: NOT OK" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--topic", "nope"], "topic nope does not exist"),
        (["--partitions", "3"], "has 2 partitions, fewer than --partitions 3"),
    ],
)
def test_the_cli_exits_1_when_the_topic_does_not_fit(
    tmp_path: Path,
    fake_cluster: FakeBrokers,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    assert workload.main(_argv(tmp_path / "h", *extra)) == 1
    assert message in capsys.readouterr().err


def test_the_cli_exits_1_when_no_broker_answers(
    tmp_path: Path, fake_cluster: FakeBrokers, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_cluster.down.update({1, 2, 3})
    assert workload.main(_argv(tmp_path / "h")) == 1
    assert "cannot reach the cluster" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--brokers", "nohost"], "expected host:port"),
        (["--brokers", ","], "at least one host:port"),
        (["--address-map", "broker1:9092"], "ADVERTISED=REACHABLE"),
        (["--partitions", "x"], "expected an integer, got 'x'"),
        (["--partitions", "0"], "partitions must be at least 1"),
        (["--duration", "soon"], "expected a number"),
        (["--duration", "-1"], "duration must be positive"),
        (["--producers", "0"], "producers must be 1..64"),
        (["--rate", "0"], "rate must be positive"),
        (["--batch", "0"], "batch must be 1..1000"),
        (["--max-sends", "0"], "max sends must be at least 1"),
        (["--acks", "0"], "acks must be -1"),
        (["--timeout-ms", "0"], "timeout-ms must be positive"),
        (["--final-read-timeout", "0"], "final read timeout must be positive"),
        (["--topic", "a/b"], "illegal"),
    ],
)
def test_the_cli_refuses_bad_arguments_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        workload.main(_argv(tmp_path / "h", *extra))
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_the_cli_needs_its_required_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        workload.main(["--brokers", "h:1"])
    assert exited.value.code == 2
    assert "--topic, --partitions, --history-dir" in capsys.readouterr().err


def test_the_cli_refuses_a_history_dir_in_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "producer-0.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "file").write_text("", encoding="utf-8")
    for target, message in [
        (tmp_path, "already holds a history"),
        (tmp_path / "file", "not a directory"),
    ]:
        with pytest.raises(SystemExit) as exited:
            workload.main(_argv(target))
        assert exited.value.code == 2
        assert message in capsys.readouterr().err
