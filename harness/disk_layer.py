"""The disk layer: a FUSE file system on the host that passes every operation through to
the directory it is mounted over, and fails or delays the ones its rules name
(`harness.disk_rules`). A broker's log directory is a bind mount of such a directory, so
the broker's unchanged storage code meets real errors (EIO, ENOSPC) and real latency.

    python -m harness.disk_layer --dir DIR --socket SOCK --tag TAG

mounts over DIR itself: the directory is opened before the mount, and every operation is
done relative to that descriptor, so with the layer gone the same files are there
(unmounting is the plain fallback, not a loss). The mount is `allow_other` (the brokers
run as another user than the daemon, root) with `default_permissions` (the kernel checks
modes as for any file system) and `hard_remove` (no `.fuse_hidden` files in the log
directory); files and directories it creates get the caller's uid and gid.

It serves a control socket, SOCK (mode 0600: root only), one JSON request per connection
and one JSON answer: `{"cmd": "stats"}` (rules, counters, pid, dir), `{"cmd": "set",
"rules": {...}}` and `{"cmd": "reset"}` (transparent again). Both start the counters from
0 and answer with the rules and counters that were in force until then. `{"cmd": "lose"}`
takes back every change made since each file's last fsync while the rules ask for
`lose_unsynced` (`harness.disk_loss`; only sound while no process has the files open: a
broker killed as by a power cut) and answers with `lost` (files, bytes) and the counters.
`--tag` is only there so that the process can be found by its command line
(`harness.disk_layers`). The process
ends when DIR is unmounted (`umount DIR`); SIGTERM unmounts and ends it too.

Needs `mfusepy` (ctypes over libfuse 3; imported in `main` only, so the rules and the
control client import without it) and root.

Threads: libfuse's worker threads run the operations; `disk-layer-control` serves the
socket; the rules and counters are one `LayerState` behind a lock.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import random
import signal
import socketserver
import threading
import time
from collections.abc import Callable
from typing import Any

from harness.disk_loss import LossKeeper
from harness.disk_rules import BadRules, LayerCounters, LayerRules

#: What `statfs` reports of the directory's file system.
STATVFS_KEYS = (
    "f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag",
    "f_frsize", "f_namemax",
)  # fmt: skip
#: Bytes one control request may hold.
MAX_REQUEST = 65536


class LayerState:
    """The rules in force and the counters, shared by the FUSE threads and the control
    thread (thread-safe)."""

    def __init__(self, seed: int | None = None, keeper: LossKeeper | None = None) -> None:
        self._lock = threading.Lock()
        self._rules = LayerRules()
        self._counters = LayerCounters()
        self._random = random.Random(seed)
        #: The journal of unsynced changes (None: a state without files, for tests).
        self.keeper = keeper

    def set_rules(self, rules: LayerRules) -> dict[str, Any]:
        """Put `rules` in force and start the counters from 0; the rules and counters
        until then, as JSON."""
        with self._lock:
            before = {"rules": self._rules.to_json(), "counters": self._counters.to_json()}
            self._rules = rules
            self._counters = LayerCounters()
            if self.keeper is not None:
                self.keeper.set(rules.lose_unsynced)
        return before

    def lose(self) -> dict[str, Any]:
        """Take back the unsynced changes; what was lost, and the rules and counters."""
        if self.keeper is None or not self._rules.lose_unsynced:
            raise ValueError("the rules do not ask for lose_unsynced")
        loss = self.keeper.lose()
        with self._lock:
            self._counters.lost_files += loss.files
            self._counters.lost_bytes += loss.bytes
        return {"lost": loss.to_json(), **self.snapshot()}

    def snapshot(self) -> dict[str, Any]:
        """The rules and counters as JSON."""
        with self._lock:
            return {"rules": self._rules.to_json(), "counters": self._counters.to_json()}

    def before(self, op: str, path: str, size: int = 0) -> int | None:
        """Count `op` on `path`, hold it as the rules say, and return the errno to fail it
        with (None: go on). A write of `size` bytes within the budget is charged to it."""
        with self._lock:
            rules = self._rules
            self._counters.seen[op] += 1
            delay = rules.delay_ms(op)
            if delay:
                self._counters.delayed[op] += 1
            failure = rules.error_for(op, path, self._random.random())
            if (
                failure is None
                and op == "write"
                and rules.over_budget(self._counters.written_bytes, size)
            ):
                failure = errno.ENOSPC
            if failure is not None:
                self._counters.failed[op] += 1
            elif op == "write":
                self._counters.written_bytes += size
        if delay:
            time.sleep(delay / 1000)
        return failure


def _relative(path: str | None) -> str:
    if path is None:
        raise OSError(9, "no path")  # EBADF: an unlinked file's path-only operation
    relative = path.lstrip("/")
    return relative or "."


def build_operations(root_fd: int, state: LayerState) -> Any:
    """The mfusepy `Operations` that pass through to `root_fd` under `state`'s rules."""
    import mfusepy

    keeper = state.keeper if state.keeper is not None else LossKeeper(root_fd)

    def fail(code: int) -> mfusepy.FuseOSError:
        return mfusepy.FuseOSError(code)

    def owned(make: Callable[[], None], relative: str) -> None:
        make()
        uid, gid, _ = mfusepy.fuse_get_context()
        os.chown(relative, uid, gid, dir_fd=root_fd, follow_symlinks=False)

    class Passthrough(mfusepy.Operations):  # type: ignore[misc]
        use_ns = True

        def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
            if fh is not None:
                st = os.fstat(fh)
            else:
                st = os.stat(_relative(path), dir_fd=root_fd, follow_symlinks=False)
            keys = ("st_mode", "st_ino", "st_nlink", "st_uid", "st_gid", "st_size")
            found: dict[str, Any] = {k: getattr(st, k) for k in keys}
            found |= {k: getattr(st, f"{k}_ns") for k in ("st_atime", "st_mtime", "st_ctime")}
            return found

        def readdir(self, path: str, fh: int) -> list[str]:
            fd = os.open(_relative(path), os.O_RDONLY | os.O_DIRECTORY, dir_fd=root_fd)
            try:
                return [".", "..", *os.listdir(fd)]
            finally:
                os.close(fd)

        def open(self, path: str, flags: int) -> int:
            fd = os.open(_relative(path), flags & ~os.O_TRUNC, dir_fd=root_fd)
            if flags & os.O_TRUNC:
                keeper.truncate(fd, 0, lambda: os.ftruncate(fd, 0))
            return fd

        def create(self, path: str, mode: int, flags: int = os.O_WRONLY) -> int:
            relative = _relative(path)
            try:
                fd = os.open(relative, flags | os.O_CREAT | os.O_EXCL, mode, dir_fd=root_fd)
                keeper.created(fd)
            except FileExistsError:  # made meanwhile: opened, not created, here
                fd = os.open(relative, flags | os.O_CREAT, mode, dir_fd=root_fd)
            uid, gid, _ = mfusepy.fuse_get_context()
            os.fchown(fd, uid, gid)
            return fd

        def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
            code = state.before("read", path or "")
            if code is not None:
                raise fail(code)
            return os.pread(fh, size, offset)

        def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
            code = state.before("write", path or "", len(data))
            if code is not None:
                raise fail(code)
            return keeper.write(fh, offset, len(data), lambda: os.pwrite(fh, data, offset))

        def fsync(self, path: str, datasync: int, fh: int) -> int:
            code = state.before("fsync", path or "")
            if code is not None:
                raise fail(code)
            (os.fdatasync if datasync else os.fsync)(fh)
            keeper.synced(fh)
            return 0

        def fsyncdir(self, path: str, datasync: int, fh: int) -> int:
            code = state.before("fsync", path or "")
            if code is not None:
                raise fail(code)
            return 0

        def flush(self, path: str, fh: int) -> int:
            return 0

        def release(self, path: str, fh: int) -> int:
            os.close(fh)
            return 0

        def truncate(self, path: str, length: int, fh: int | None = None) -> int:
            if fh is not None:
                keeper.truncate(fh, length, lambda: os.ftruncate(fh, length))
                return 0
            fd = os.open(_relative(path), os.O_WRONLY, dir_fd=root_fd)
            try:
                keeper.truncate(fd, length, lambda: os.ftruncate(fd, length))
            finally:
                os.close(fd)
            return 0

        def mkdir(self, path: str, mode: int) -> int:
            relative = _relative(path)
            owned(lambda: os.mkdir(relative, mode, dir_fd=root_fd), relative)
            return 0

        def rmdir(self, path: str) -> int:
            os.rmdir(_relative(path), dir_fd=root_fd)
            return 0

        def unlink(self, path: str) -> int:
            keeper.unlinking(_relative(path))
            os.unlink(_relative(path), dir_fd=root_fd)
            return 0

        def rename(self, old: str, new: str) -> int:
            keeper.unlinking(_relative(new))
            os.rename(_relative(old), _relative(new), src_dir_fd=root_fd, dst_dir_fd=root_fd)
            return 0

        def chmod(self, path: str, mode: int) -> int:
            os.chmod(_relative(path), mode, dir_fd=root_fd)
            return 0

        def chown(self, path: str, uid: int, gid: int) -> int:
            os.chown(_relative(path), uid, gid, dir_fd=root_fd, follow_symlinks=False)
            return 0

        def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
            now = time.time_ns()
            os.utime(_relative(path), ns=times or (now, now), dir_fd=root_fd)
            return 0

        def statfs(self, path: str) -> dict[str, int]:
            st = os.fstatvfs(root_fd)
            return {k: getattr(st, k) for k in STATVFS_KEYS}

    return Passthrough()


def control_server(path: str, state: LayerState, root: str) -> socketserver.BaseServer:
    """The control socket's server at `path` (mode 0600), not yet serving."""
    answers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "stats": lambda request: state.snapshot(),
        "set": lambda request: _set(state, request.get("rules")),
        "reset": lambda request: _set(state, {}),
        "lose": lambda request: state.lose(),
    }

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            try:
                request = json.loads(self.rfile.readline(MAX_REQUEST))
                answer = answers[request["cmd"]](request)
                answer |= {"ok": True, "pid": os.getpid(), "dir": root}
            except (ValueError, KeyError, TypeError, BadRules) as exc:
                answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            self.wfile.write(json.dumps(answer).encode() + b"\n")

    if os.path.exists(path):
        os.unlink(path)
    old_mask = os.umask(0o177)
    try:
        return socketserver.ThreadingUnixStreamServer(path, Handler)
    finally:
        os.umask(old_mask)


def _set(state: LayerState, rules: Any) -> dict[str, Any]:
    return state.set_rules(LayerRules.from_json(rules))


def main(argv: list[str] | None = None) -> None:
    """Open the directory, serve the control socket, mount over the directory until it
    is unmounted (or SIGTERM)."""
    import mfusepy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, help="the directory to mount over")
    parser.add_argument("--socket", required=True, help="the control socket's path")
    parser.add_argument("--tag", required=True, help="names the process (project/service)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the error draws")
    args = parser.parse_args(argv)
    root = os.path.realpath(args.dir)
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    state = LayerState(args.seed, LossKeeper(root_fd))
    server = control_server(args.socket, state, root)
    threading.Thread(target=server.serve_forever, name="disk-layer-control", daemon=True).start()
    signal.signal(signal.SIGTERM, lambda signum, frame: mfusepy.fuse_exit())
    try:
        mfusepy.FUSE(
            build_operations(root_fd, state),
            root,
            foreground=True,
            allow_other=True,
            default_permissions=True,
            hard_remove=True,
            fsname=f"testbed-disk:{args.tag}",
            subtype="testbed-disk",
        )
    finally:
        server.shutdown()
        server.server_close()
        if os.path.exists(args.socket):
            os.unlink(args.socket)
        os.close(root_fd)


if __name__ == "__main__":
    main()
