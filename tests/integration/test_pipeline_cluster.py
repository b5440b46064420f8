"""The report on a real Spark cluster: a standalone master and one worker started as local
processes from the installed pyspark, the job run with `--master spark://...` as a child
process (with no project code on the worker's path: the session ships it), and every
table equal to local mode's. Both processes are stopped in a `finally`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyspark
import pytest

from harness.waiting import wait_until
from pipeline.report import TABLE_TITLES, Report

#: Two reports (local, then on the cluster) on a shared 2-core machine.
pytestmark = pytest.mark.timeout(1200)

ROOT = Path(__file__).resolve().parents[2]
SPARK_HOME = Path(pyspark.__file__).parent
REGISTER_TIMEOUT_S = 90.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spark_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME")}
    return env | {
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
    }


def _start(args: list[str], log: Path, cwd: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=_spark_env(),
            cwd=cwd,
        )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[str]:
    """A master and one worker (2 cores, 1 GiB) on 127.0.0.1; yields the master URL once
    the worker is registered."""
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    master_log, worker_log = tmp_path / "master.log", tmp_path / "worker.log"
    master = _start(
        [
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            "0",
        ],
        master_log,
        tmp_path,
    )
    worker = None
    try:
        worker = _start(
            [
                "org.apache.spark.deploy.worker.Worker",
                url,
                "--host",
                "127.0.0.1",
                "--webui-port",
                "0",
                "--cores",
                "2",
                "--memory",
                "1g",
                "--work-dir",
                str(tmp_path / "work"),
            ],
            worker_log,
            tmp_path,
        )
        processes = (master, worker)

        def registered() -> bool:
            for p in processes:
                if p.poll() is not None:
                    raise RuntimeError(
                        f"a Spark process exited {p.returncode}: "
                        f"{master_log.read_text()[-2000:]}"
                        f"{worker_log.read_text()[-2000:]}"
                    )
            return "Successfully registered with master" in worker_log.read_text()

        wait_until(
            registered,
            REGISTER_TIMEOUT_S,
            lambda: f"worker not registered: {worker_log.read_text()[-2000:]}",
            interval=0.2,
        )
        yield url
    finally:
        if worker is not None:
            _stop(worker)
        _stop(master)


def test_the_report_on_a_standalone_cluster_equals_local_mode(
    standalone: str, pipeline_runs: Path, local_report: Report, tmp_path: Path
) -> None:
    out = tmp_path / "cluster-report"
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "report",
            "--runs",
            str(pipeline_runs),
            "--out",
            str(out),
            "--master",
            standalone,
        ],
        cwd=ROOT,
        env=env | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    local = local_report.html.parent / "tables"
    for name in TABLE_TITLES:
        cluster_table = pd.read_parquet(out / "tables" / f"{name}.parquet")
        pd.testing.assert_frame_equal(
            cluster_table, pd.read_parquet(local / f"{name}.parquet"), obj=name
        )
    assert (out / "report.html").is_file()
