"""Brokers as local processes (`python -m broker_node`) for the integration tier.

Each broker gets a free port, its own log file and health file; the test's run directory
collects the event logs. Brokers run with the `fast` profile's timings (`domain.profiles`)
and the session timeout given; extra arguments, later on the command line, win. Brokers
speak plaintext gRPC unless given a TLS directory (`python -m security init`), whatever
`TLS_DIR` the caller's environment holds. Methods run on the test's thread.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from domain.profiles import FAST, PROFILE_FLAG
from eventlog import event_log_path, read_events

REPO_ROOT = Path(__file__).resolve().parents[1]


class BrokerProcess:
    """One broker process; can be started again after it stopped or was killed."""

    def __init__(
        self,
        broker_id: int,
        zk_connect: str,
        run_dir: Path,
        session_timeout_ms: int = 3000,
        tls_dir: Path | None = None,
        zk_tls_dir: Path | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.tls_dir = tls_dir
        #: The TLS directory for ZooKeeper (`--zk-tls-dir`); None: plaintext.
        self.zk_tls_dir = zk_tls_dir
        self.zk_connect = zk_connect
        self.run_dir = run_dir
        self.session_timeout_ms = session_timeout_ms
        self.log_path = run_dir / "logs" / f"broker{broker_id}.log"
        self.health_file = run_dir / "health" / f"broker{broker_id}"
        self._proc: subprocess.Popen[bytes] | None = None
        self._extra_args: tuple[str, ...] = ()

    @property
    def pid(self) -> int:
        """The running process's id."""
        assert self._proc is not None, "broker not started"
        return self._proc.pid

    def start(self, *extra_args: str) -> None:
        """Launch the process (does not wait for registration). Extra arguments given once
        are kept for later restarts."""
        if extra_args:
            self._extra_args = extra_args
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        args = [
            sys.executable,
            "-m",
            "broker_node",
            "--broker-id",
            str(self.broker_id),
            "--zk-connect",
            self.zk_connect,
            PROFILE_FLAG,
            FAST,
            "--zk-session-timeout-ms",
            str(self.session_timeout_ms),
            "--listen-host",
            "127.0.0.1",
            "--advertised-host",
            "127.0.0.1",
            "--port",
            "0",
            "--run-dir",
            str(self.run_dir),
            "--health-file",
            str(self.health_file),
            "--metrics-port",
            "0",
            "--tls-dir",
            str(self.tls_dir) if self.tls_dir is not None else "off",
            "--zk-tls-dir",
            str(self.zk_tls_dir) if self.zk_tls_dir is not None else "off",
            *self._extra_args,
        ]
        log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child
        try:
            self._proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)
        finally:
            log.close()

    def is_running(self) -> bool:
        """True while the process has not exited."""
        return self._proc is not None and self._proc.poll() is None

    def returncode(self) -> int | None:
        """The exit code once the process ended."""
        return None if self._proc is None else self._proc.poll()

    def port(self) -> int | None:
        """The gRPC port from the health file (written once registered)."""
        try:
            return int(self.health_file.read_text().split()[2])
        except (OSError, IndexError, ValueError):
            return None

    def metrics_port(self) -> int | None:
        """The Prometheus port from the health file (0 or None: not serving)."""
        try:
            return int(self.health_file.read_text().split()[3]) or None
        except (OSError, IndexError, ValueError):
            return None

    def kill(self) -> None:
        """SIGKILL and reap (the ZooKeeper session is left to expire)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(10)
        self.health_file.unlink(missing_ok=True)

    def terminate(self, timeout: float = 20) -> int:
        """SIGTERM and wait for a clean exit; returns the exit code."""
        assert self._proc is not None
        self._proc.send_signal(signal.SIGTERM)
        return self._proc.wait(timeout)

    def pause(self) -> None:
        """SIGSTOP: the process stops answering, its session will expire."""
        assert self._proc is not None
        self._proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT."""
        assert self._proc is not None
        self._proc.send_signal(signal.SIGCONT)

    def events(self) -> list[dict[str, Any]]:
        """The broker's event log so far."""
        return read_events(event_log_path(self.run_dir, f"broker{self.broker_id}"))

    def applied_leader_and_isr(self) -> bool:
        """Whether the broker has accepted a LeaderAndIsr naming at least one partition: a
        partition state znode is written before its LeaderAndIsr is sent, so a test that
        waits only on ZooKeeper can get ahead of the broker."""
        return any(
            e["kind"] == "request_accepted" and e["api"] == "LeaderAndIsr" and e["partitions"]
            for e in self.events()
        )

    def metrics(self) -> dict[str, float]:
        """One scrape of the broker's Prometheus endpoint: sample name -> value."""
        port = self.metrics_port()
        assert port is not None, "the broker serves no metrics"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            text = reply.read().decode()
        return {
            line.split(" ")[0]: float(line.split(" ")[1])
            for line in text.splitlines()
            if line and not line.startswith("#")
        }

    def log_tail(self, lines: int = 30) -> str:
        """The end of the broker's stdout/stderr, for failure messages."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"
