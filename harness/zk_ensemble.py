"""A real ZooKeeper ensemble run as local JVM processes, plus session-expiry helpers.

Modelled on kazoo's own testing harness: every member is a ``QuorumPeerMain`` JVM
from Debian's ``zookeeper`` package, listening on 127.0.0.1 only, on ports picked
by the kernel. Everything here runs on the calling (test) thread; the only other
threads involved are kazoo's own connection threads.

Given a `ZkTls`, the ensemble serves as the compose cluster's does: the client port
speaks TLS only (Netty, client certificates of the CA required), the servers talk to
each other over TLS, and whether a member serves is asked of its admin server on
loopback (plain HTTP, as the containers' health check does), the four-letter words
being unreachable without a client certificate. Clients then connect with
`open_client(..., tls)`.
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState

from harness.ports import free_ports
from harness.waiting import wait_until
from harness.zk_config import TLS_CLASSPATH, admin_server_state, four_letter_word, member_lines
from security.zk_tls import ZkTls
from zkdata.kazoo_handler import PollingHandler

JAVA_DIR = Path("/usr/share/java")
ZOOKEEPER_JAR = JAVA_DIR / "zookeeper.jar"
# zookeeper.jar's manifest Class-Path pulls in its own dependencies; logging is extra.
CLASSPATH = ":".join(
    str(JAVA_DIR / jar) for jar in ("zookeeper.jar", "slf4j-log4j12.jar", "log4j-1.2.jar")
)
LOG4J_CONFIG = Path("/etc/zookeeper/conf/log4j.properties")
#: The heap may grow to 1 GiB: the 100,000-partition benchmark keeps 200,000 znodes (and
#: snapshots them) in each server, which left a 256 MiB heap collecting while followers fell
#: out of sync. The heap starts small, so small ensembles stay small.
JVM_OPTIONS = ("-Xms64m", "-Xmx1g", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
HOST = "127.0.0.1"
START_TIMEOUT = 60.0
SERVING_MODES = frozenset({"leader", "follower"})
_LOG_TAIL_LINES = 40


def missing_prerequisites() -> list[str]:
    """List what is missing to run an ensemble (empty when ready); runs on the caller."""
    missing = []
    if shutil.which("java") is None:
        missing.append("`java` is not on PATH")
    if not ZOOKEEPER_JAR.is_file():
        missing.append(f"{ZOOKEEPER_JAR} does not exist")
    return missing


def new_chroot() -> str:
    """Return a fresh, unique chroot path such as ``/t-<uuid hex>``; runs on the caller."""
    return f"/t-{uuid.uuid4().hex}"


@dataclass(frozen=True)
class _MemberPorts:
    client: int
    quorum: int
    election: int
    admin: int


class ZkEnsemble:
    """A ZooKeeper ensemble of ``size`` local JVM processes under ``base_dir``.

    Members are addressed by 0-based index ``i`` (their ``myid`` is ``i + 1``).
    Each member gets ``base_dir/server-<myid>/`` (``zoo.cfg`` and ``data/``) and a
    log file ``base_dir/server-<myid>.log`` that collects its stdout and stderr
    across restarts. Not thread-safe: drive it from one thread (the test thread).
    """

    def __init__(
        self, base_dir: Path, size: int = 3, tick_ms: int = 500, tls: ZkTls | None = None
    ) -> None:
        """Describe the ensemble without starting anything; runs on the caller. With
        `tls`, its directory's CA and server certificates (`zk<myid>.pem`, which name
        127.0.0.1) secure the members, and `tls` is what the ensemble's clients use."""
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        self.base_dir = Path(base_dir)
        self.size = size
        self.tick_ms = tick_ms
        self.tls = tls.check() if tls is not None else None
        self._ports: list[_MemberPorts] = []
        self._processes: list[subprocess.Popen[bytes] | None] = [None] * size
        self._atexit_registered = False

    # -- addresses ---------------------------------------------------------------

    @property
    def client_ports(self) -> list[int]:
        """The members' client ports, by index (empty before ``start``)."""
        return [ports.client for ports in self._ports]

    def connect_string(self, chroot: str = "", members: Sequence[int] | None = None) -> str:
        """Return ``127.0.0.1:p1,127.0.0.1:p2,...[/chroot]`` for kazoo.

        ``members`` restricts the string to those member indices (default: all),
        which pins a client to particular servers. Runs on the caller.
        """
        if not self._ports:
            raise RuntimeError("the ensemble has not been started")
        if chroot and not chroot.startswith("/"):
            raise ValueError(f"chroot must start with '/', got {chroot!r}")
        indices = range(self.size) if members is None else members
        hosts = ",".join(f"{HOST}:{self._ports[i].client}" for i in indices)
        return hosts + chroot

    # -- paths -------------------------------------------------------------------

    def server_dir(self, i: int) -> Path:
        """Directory holding member ``i``'s ``zoo.cfg`` and ``data/``."""
        return self.base_dir / f"server-{i + 1}"

    def log_path(self, i: int) -> Path:
        """File collecting member ``i``'s stdout and stderr."""
        return self.base_dir / f"server-{i + 1}.log"

    def log_tail(self, i: int, lines: int = _LOG_TAIL_LINES) -> str:
        """The last ``lines`` lines of member ``i``'s log, for failure messages."""
        try:
            text = self.log_path(i).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return f"<no log: {exc}>"
        return "\n".join(text.splitlines()[-lines:])

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> None:
        """Configure and launch every member, then wait until all of them serve.

        Blocks the calling thread until every member answers ``srvr`` with
        ``Mode: leader`` or ``Mode: follower`` (deadline: 60 s). If a member exits
        early or the deadline passes, every member is killed and a
        ``RuntimeError``/``TimeoutError`` carrying the log tails is raised.
        """
        if any(process is not None for process in self._processes):
            raise RuntimeError("the ensemble is already running")
        if not self._ports:
            flat = free_ports(4 * self.size)
            self._ports = [_MemberPorts(*flat[4 * i : 4 * i + 4]) for i in range(self.size)]
        if not self._atexit_registered:
            # Safety net if the test session dies before its fixture teardown runs.
            atexit.register(self.stop)
            self._atexit_registered = True
        try:
            for i in range(self.size):
                self._write_config(i)
                self._launch(i)
            wait_until(
                lambda: all(self._serving(i) for i in range(self.size)),
                timeout=START_TIMEOUT,
                message=lambda: "ZooKeeper ensemble did not form a quorum\n" + self._describe(),
            )
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """SIGKILL every running member and reap it; idempotent. Runs on the caller."""
        for i in range(self.size):
            self.kill_server(i)

    def kill_server(self, i: int) -> None:
        """SIGKILL member ``i`` and wait for it to exit (no-op if it is not running)."""
        process = self._processes[i]
        if process is None:
            return
        self._processes[i] = None
        if process.poll() is None:
            process.kill()
        process.wait()

    def start_server(self, i: int) -> None:
        """Relaunch member ``i`` (same ports and data) and wait until it serves again.

        Blocks the calling thread until the member reports leader or follower
        mode (deadline: 60 s); raises with its log tail if it exits or times out.
        """
        if not self._ports:
            raise RuntimeError("the ensemble has not been started")
        if self._processes[i] is not None:
            raise RuntimeError(f"ZooKeeper server {i + 1} is already running")
        self._launch(i)
        wait_until(
            lambda: self._serving(i),
            timeout=START_TIMEOUT,
            message=lambda: f"ZooKeeper server {i + 1} did not rejoin\n" + self._describe(),
        )

    def is_running(self, i: int) -> bool:
        """Whether member ``i``'s JVM process is alive."""
        process = self._processes[i]
        return process is not None and process.poll() is None

    def server_mode(self, i: int) -> str | None:
        """Member ``i``'s ``Mode:`` from ``srvr`` (``leader``, ``follower``, ...).

        ``None`` when the member is unreachable or not serving requests. Runs on
        the calling thread (a short blocking socket exchange).
        """
        if not self._ports:
            return None
        if self.tls is not None:
            return admin_server_state(self._ports[i].admin)
        reply = four_letter_word(self._ports[i].client, "srvr")
        if reply is None:
            return None
        for line in reply.splitlines():
            if line.startswith("Mode:"):
                return line.partition(":")[2].strip()
        return None

    # -- internals ---------------------------------------------------------------

    def _write_config(self, i: int) -> None:
        data_dir = self.server_dir(i) / "data"
        data_dir.mkdir(parents=True, exist_ok=True)
        (data_dir / "myid").write_text(f"{i + 1}\n", encoding="ascii")
        lines = [
            f"tickTime={self.tick_ms}",
            "initLimit=20",
            "syncLimit=10",
            f"dataDir={data_dir}",
            "minSessionTimeout=1000",
            "maxSessionTimeout=60000",
            "forceSync=no",
            "4lw.commands.whitelist=*",
            *member_lines(self.tls, i + 1, self._ports[i].client, self._ports[i].admin),
        ]
        if self.size > 1:
            lines += [
                f"server.{j + 1}={HOST}:{ports.quorum}:{ports.election}"
                for j, ports in enumerate(self._ports)
            ]
        (self.server_dir(i) / "zoo.cfg").write_text("\n".join(lines) + "\n", encoding="ascii")

    def _launch(self, i: int) -> None:
        classpath = CLASSPATH if self.tls is None else f"{CLASSPATH}:{TLS_CLASSPATH}"
        command = [
            "java",
            *JVM_OPTIONS,
            "-cp",
            classpath,
            "-Djava.awt.headless=true",
            "-Dfile.encoding=UTF-8",
            f"-Dlog4j.configuration=file:{LOG4J_CONFIG}",
            "-Dzookeeper.root.logger=INFO,CONSOLE",
            f"-Dzookeeper.log.dir={self.server_dir(i)}",
            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            str(self.server_dir(i) / "zoo.cfg"),
        ]
        with self.log_path(i).open("ab") as log:
            log.write(f"==== launching server {i + 1} at {time.ctime()} ====\n".encode())
            log.flush()
            self._processes[i] = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.server_dir(i),
            )

    def _serving(self, i: int) -> bool:
        """Whether member ``i`` serves; raises if its process has died."""
        process = self._processes[i]
        if process is None:
            raise RuntimeError(f"ZooKeeper server {i + 1} is not running")
        code = process.poll()
        if code is not None:
            raise RuntimeError(
                f"ZooKeeper server {i + 1} exited early with code {code}; "
                f"tail of {self.log_path(i)}:\n{self.log_tail(i)}"
            )
        return self.server_mode(i) in SERVING_MODES

    def _describe(self) -> str:
        parts = []
        for i in range(self.size):
            parts.append(
                f"--- server {i + 1}: running={self.is_running(i)} mode={self.server_mode(i)} "
                f"log={self.log_path(i)}\n{self.log_tail(i, 15)}"
            )
        return "\n".join(parts)


@contextmanager
def open_client(hosts: str, timeout: float = 10, tls: ZkTls | None = None) -> Iterator[KazooClient]:
    """Yield a started ``KazooClient`` on ``hosts`` (over ``tls`` when given); stop and
    close it on exit.

    ``start`` blocks the calling thread until connected (deadline 15 s); kazoo
    then runs the connection on its own thread, with the ``PollingHandler`` the
    brokers' sessions use.
    """
    options = tls.kazoo_options() if tls is not None else {}
    client = KazooClient(hosts=hosts, timeout=timeout, handler=PollingHandler(), **options)
    try:
        client.start(timeout=15)
        yield client
    finally:
        client.stop()
        client.close()


_EXPIRY_ATTEMPT_WINDOW = 5.0


def _same_tls(client: KazooClient) -> dict[str, object]:
    """The TLS options `client` was made with, for a client on the same servers."""
    if not client.use_ssl:
        return {}
    return {
        "use_ssl": True,
        "ca": client.ca,
        "certfile": client.certfile,
        "keyfile": client.keyfile,
        "verify_certs": client.verify_certs,
        "check_hostname": client.check_hostname,
    }


def expire_session(client: KazooClient, timeout: float = 10) -> None:
    """Expire ``client``'s ZooKeeper session for real and wait until it notices.

    Opens a second ``KazooClient`` on the same servers with the same session id
    and password, then stops it: closing that duplicate closes the session
    server-side, which deletes its ephemerals and drops the original client's
    connection. Blocks the calling thread until a state listener on ``client``
    (called on kazoo's connection thread) sees ``KazooState.LOST``; repeats the
    close if needed and raises ``TimeoutError`` after ``timeout`` seconds.
    """
    session_id = client._session_id
    session_passwd = client._session_passwd
    if not client.connected or session_id is None:
        raise RuntimeError("expire_session needs a connected client")
    hosts = ",".join(f"{host}:{port}" for host, port in client.hosts)
    lost = threading.Event()

    def on_state(state: KazooState) -> None:
        if state == KazooState.LOST:
            lost.set()

    client.add_listener(on_state)
    deadline = time.monotonic() + timeout
    try:
        while True:
            remaining = deadline - time.monotonic()
            duplicate = KazooClient(
                hosts=hosts,
                client_id=(session_id, session_passwd),
                timeout=client._session_timeout / 1000,
                **_same_tls(client),
            )
            try:
                duplicate.start(timeout=max(remaining, 1.0))
            finally:
                duplicate.stop()
                duplicate.close()
            remaining = deadline - time.monotonic()
            try:
                wait_until(
                    lost.is_set,
                    timeout=max(min(_EXPIRY_ATTEMPT_WINDOW, remaining), 0.0),
                    message=f"client did not observe the loss of session {session_id:#x}",
                )
                return
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise
    finally:
        client.remove_listener(on_state)
