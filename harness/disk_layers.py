"""The disk layers of a compose project, from the host: where they live, starting and
stopping their daemons (`harness.disk_layer`), finding them in the mount table, and
talking to their control sockets (`LayerControl`).

Each broker of project P has a directory `<root>/P/<service>/` holding `data/` (bind
mounted as the broker's log directory by docker-compose.disk.yml) and `control.sock`.
`root` is `TESTBED_DISK_DIR`, else `/var/lib/testbed-disk`. `start_layers` makes the
directories (owned by the containers' user) and mounts a layer over every `data/` before
the containers start: a FUSE mount cannot be slid under files a running broker holds
open, so the layer is there from the start and passes everything through until a disk
fault gives it rules. Where FUSE cannot be had (no `/dev/fuse`, not root, no `mfusepy`)
the directories stay plain ones and `start_layers` says why: the cluster runs, the disk
faults refuse to start.

    python -m harness.disk_layers up [--project P] [--services broker1,broker2,broker3]
    python -m harness.disk_layers down [--project P] [--remove]
    python -m harness.disk_layers status [--project P]

The project defaults to compose's (`COMPOSE_PROJECT_NAME`, else the directory's name).
`up` prints `DISK_LAYER_DIR=<root>/P` for compose; `down` unmounts and ends the daemons
(after the containers are gone: a container that still holds the mount keeps its daemon
serving, and `down` then ends the daemon, which fails the container's files with ENOTCONN).

Runs on the caller's thread; the daemons are processes of their own.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.disk_rules import LayerCounters, LayerRules
from harness.host_processes import end, gone, tagged
from harness.waiting import wait_until

DEFAULT_ROOT = Path("/var/lib/testbed-disk")
ROOT_ENV = "TESTBED_DISK_DIR"
#: What docker-compose.disk.yml reads: the project's directory of layers.
COMPOSE_ENV = "DISK_LAYER_DIR"
#: The file system type and source prefix of a layer in the mount table.
FSTYPE = "fuse.testbed-disk"
SOURCE_PREFIX = "testbed-disk:"
MOUNT_WAIT_S = 15.0
END_WAIT_S = 5.0
CONTROL_TIMEOUT_S = 5.0
BROKERS = ("broker1", "broker2", "broker3")
DAEMON_MODULE = "harness.disk_layer"


class DiskLayerError(Exception):
    """A layer that cannot be started, reached or stopped."""


def layer_root(env: dict[str, str] | None = None) -> Path:
    """Where the projects' layers live (`TESTBED_DISK_DIR`, else `DEFAULT_ROOT`)."""
    found = (os.environ if env is None else env).get(ROOT_ENV)
    return Path(found) if found else DEFAULT_ROOT


@dataclass(frozen=True, slots=True)
class LayerPaths:
    """One service's layer: its directory, the mounted `data/` and the control socket."""

    root: Path
    project: str
    service: str

    @property
    def base(self) -> Path:
        """`<root>/<project>/<service>`."""
        return self.root / self.project / self.service

    @property
    def data(self) -> Path:
        """The directory the layer mounts over (the broker's log directory)."""
        return self.base / "data"

    @property
    def socket(self) -> Path:
        """The control socket."""
        return self.base / "control.sock"

    @property
    def tag(self) -> str:
        """`<project>/<service>`: the daemon's `--tag` and its mount source."""
        return f"{self.project}/{self.service}"


@dataclass(frozen=True, slots=True)
class LayerStats:
    """What a layer's control socket reports."""

    pid: int
    rules: LayerRules
    counters: LayerCounters
    #: What the `lose` answered with took back (files, bytes); None for other requests.
    lost: tuple[int, int] | None = None


class LayerControl:
    """A client of one layer's control socket (one connection per request)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _ask(self, request: dict[str, Any]) -> LayerStats:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(CONTROL_TIMEOUT_S)
                sock.connect(str(self.path))
                sock.sendall(json.dumps(request).encode() + b"\n")
                answer = json.loads(sock.makefile("rb").readline())
        except (OSError, ValueError) as exc:
            raise DiskLayerError(f"disk layer {self.path}: {exc}") from None
        if not answer.get("ok"):
            raise DiskLayerError(f"disk layer {self.path} refused: {answer.get('error')}")
        lost = answer.get("lost")
        return LayerStats(
            int(answer["pid"]),
            LayerRules.from_json(answer["rules"]),
            LayerCounters.from_json(answer["counters"]),
            None if lost is None else (int(lost["files"]), int(lost["bytes"])),
        )

    def stats(self) -> LayerStats:
        """The rules in force and the counters since they were set."""
        return self._ask({"cmd": "stats"})

    def set(self, rules: LayerRules) -> LayerStats:
        """Put `rules` in force and start the counters from 0; the answer holds the rules
        and counters until then."""
        return self._ask({"cmd": "set", "rules": rules.to_json()})

    def lose(self) -> LayerStats:
        """Take back every change since each file's last fsync (the rules must ask for
        `lose_unsynced`; no process may hold the files open); `lost` says how much."""
        return self._ask({"cmd": "lose"})

    def reset(self) -> LayerStats:
        """Make the layer transparent again; the answer holds the rules and counters until
        then."""
        return self._ask({"cmd": "reset"})


def mounted(mountinfo: str) -> dict[str, Path]:
    """The layers in a mount table (`/proc/<pid>/mountinfo` text): tag -> mount point."""
    found = {}
    for line in mountinfo.splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        after = line.split(" - ", 1)[1].split()
        if len(after) >= 2 and after[0] == FSTYPE and after[1].startswith(SOURCE_PREFIX):
            found[after[1].removeprefix(SOURCE_PREFIX)] = Path(fields[4])
    return found


def host_layers(project: str | None = None) -> dict[str, Path]:
    """The layers mounted on the host (of `project` only, when given): tag -> mount point."""
    found = mounted(Path("/proc/self/mountinfo").read_text())
    if project is None:
        return found
    return {tag: point for tag, point in found.items() if tag.split("/")[0] == project}


def fuse_unavailable() -> str | None:
    """Why a layer cannot be mounted here, or None when it can."""
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse"
    if os.geteuid() != 0:
        return "not root (the layer mounts with allow_other)"
    try:
        import mfusepy  # noqa: F401
    except (ImportError, OSError) as exc:
        return f"no FUSE binding ({exc})"
    return None


def _owner() -> tuple[int, int]:
    """The containers' uid and gid (scripts/container-user.sh's rule)."""
    if os.geteuid() == 0:
        return 10001, 10001
    return os.getuid(), os.getgid()


def start_layer(paths: LayerPaths) -> int:
    """Mount a layer over `paths.data` (made first, owned by the containers' user) and
    return its daemon's pid; a layer already there and answering is kept."""
    uid, gid = _owner()
    for directory, mode in ((paths.base, 0o700), (paths.data, 0o750)):
        directory.mkdir(parents=True, exist_ok=True)
        os.chmod(directory, mode)
    os.chown(paths.data, uid, gid)
    if paths.tag in host_layers():
        return LayerControl(paths.socket).stats().pid
    log = open(paths.base / "layer.log", "ab")  # noqa: SIM115 - handed to the daemon
    with log:
        process = subprocess.Popen(
            [
                sys.executable, "-m", DAEMON_MODULE, "--dir", str(paths.data),
                "--socket", str(paths.socket), "--tag", paths.tag,
            ],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
        )  # fmt: skip

    def up() -> bool:
        if process.poll() is not None:
            raise DiskLayerError(f"disk layer {paths.tag} exited: {_tail(paths)}")
        return paths.tag in host_layers() and paths.socket.exists()

    wait_until(up, MOUNT_WAIT_S, f"disk layer {paths.tag} not mounted in {MOUNT_WAIT_S} s")
    return LayerControl(paths.socket).stats().pid


def _tail(paths: LayerPaths) -> str:
    try:
        return (paths.base / "layer.log").read_text(errors="replace")[-2000:]
    except OSError:
        return "(no log)"


def daemons(tag_prefix: str) -> dict[int, str]:
    """The host's layer daemons whose tag starts with `tag_prefix`: pid -> tag."""
    return tagged(DAEMON_MODULE, tag_prefix)


def stop_layer(paths: LayerPaths) -> None:
    """Unmount the layer (lazily when busy) and end its daemon: it ends by itself once no
    mount namespace holds the layer any more; SIGTERM, then SIGKILL, otherwise."""
    pids = [pid for pid, tag in daemons(paths.tag).items() if tag == paths.tag]
    if paths.tag in host_layers():
        done = subprocess.run(["umount", str(paths.data)], capture_output=True, check=False)
        if done.returncode != 0:
            subprocess.run(["umount", "-l", str(paths.data)], capture_output=True, check=False)
    for pid in pids:
        _end(pid)
    paths.socket.unlink(missing_ok=True)
    if paths.tag in host_layers():
        raise DiskLayerError(f"disk layer {paths.tag} is still mounted at {paths.data}")


def _end(pid: int) -> None:
    """Wait for a daemon whose mount is gone to end; end it otherwise."""
    if not gone(pid, END_WAIT_S) and not end(pid, END_WAIT_S):
        raise DiskLayerError(f"disk layer daemon {pid} survived SIGKILL")
    with contextlib.suppress(TimeoutError):  # reap it when this process started it
        wait_until(lambda: _reaped(pid), END_WAIT_S, f"disk layer daemon {pid} not reaped")


def _reaped(pid: int) -> bool:
    """Whether the process is no child of this one, or was reaped now."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done == pid


def start_layers(root: Path, project: str, services: Sequence[str] = BROKERS) -> str | None:
    """Make every service's directory and mount its layer; None when all are mounted,
    else why none is (the directories are then plain ones, the fallback)."""
    missing = fuse_unavailable()
    for service in services:
        paths = LayerPaths(root, project, service)
        if missing is None:
            start_layer(paths)
        else:
            uid, gid = _owner()
            paths.data.mkdir(parents=True, exist_ok=True)
            os.chown(paths.data, uid, gid)
    return missing


def stop_layers(root: Path, project: str, remove: bool = False) -> None:
    """Unmount every layer of the project and end its daemons; with `remove`, delete the
    project's directories (the brokers' data) once nothing is mounted there."""
    tags = set(host_layers(project)) | set(daemons(f"{project}/").values())
    for tag in sorted(tags):
        stop_layer(LayerPaths(root, project, tag.split("/", 1)[1]))
    if remove and not host_layers(project):
        shutil.rmtree(root / project, ignore_errors=True)


def stop_orphans(root: Path, project: str, services: Sequence[str]) -> list[str]:
    """Stop the project's layers whose service has no container any more (a project
    taken down without `stop_layers`); the tags of those stopped."""
    tags = set(host_layers(project)) | set(daemons(f"{project}/").values())
    orphans = sorted(t for t in tags if t.split("/", 1)[1] not in services)
    for tag in orphans:
        stop_layer(LayerPaths(root, project, tag.split("/", 1)[1]))
    return orphans


def default_project() -> str:
    """`COMPOSE_PROJECT_NAME`, else the working directory's name as compose normalises it."""
    if os.environ.get("COMPOSE_PROJECT_NAME"):
        return os.environ["COMPOSE_PROJECT_NAME"]
    return re.sub(r"[^a-z0-9_-]", "", Path.cwd().name.lower()).lstrip("-_")


def main(argv: list[str] | None = None) -> int:
    """`up`, `down` or `status` of a project's layers; the exit code."""
    parser = argparse.ArgumentParser(prog="python -m harness.disk_layers")
    parser.add_argument("command", choices=("up", "down", "status"))
    parser.add_argument(
        "--project",
        default=default_project(),
        help="compose project (default: COMPOSE_PROJECT_NAME or this directory's name)",
    )
    parser.add_argument("--services", default=",".join(BROKERS))
    parser.add_argument("--remove", action="store_true", help="down: delete the data too")
    args = parser.parse_args(argv)
    root = layer_root()
    if args.command == "up":
        why = start_layers(root, args.project, args.services.split(","))
        if why:
            print(f"disk layers: plain directories, no FUSE layer ({why})", file=sys.stderr)
        print(f"{COMPOSE_ENV}={root / args.project}")
    elif args.command == "down":
        stop_layers(root, args.project, args.remove)
    else:
        for tag, point in sorted(host_layers(args.project).items()):
            stats = LayerControl(LayerPaths(root, *tag.split("/", 1)).socket).stats()
            print(tag, point, json.dumps(stats.counters.to_json()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
