"""The disk layer (`harness.disk_layer`) on a temporary directory of the host, no
container: a real FUSE mount passes files through, fails and delays the operations its
rules name, and leaves nothing mounted or running once stopped.

Setup: a directory with one file, a layer mounted over it (`start_layer`).
Steps and checks:
- the file made before the mount reads through the layer; a file written through it is
  in the directory once the layer is gone (the layer is a view, not a copy);
- a file made by the containers' user (uid 10001) through the layer is owned by it;
- an error rule on writes of `*.log` fails such a write with EIO and no other; the
  counters say one write failed;
- a latency rule on fsync holds an fsync at least that long; the counters say delayed;
- a budget refuses the write that passes it with ENOSPC;
- `stop_layer` unmounts, ends the daemon and removes the socket.

Needs root, /dev/fuse and the `mfusepy` binding; fails (never skips) without them.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.disk_layers import (
    LayerControl,
    LayerPaths,
    daemons,
    fuse_unavailable,
    host_layers,
    start_layer,
    stop_layer,
)
from harness.disk_rules import ErrorRule, LatencyRule, LayerRules

pytestmark = pytest.mark.integration

CONTAINER_UID = 10001


@pytest.fixture
def layer() -> Iterator[LayerPaths]:
    """A layer mounted over `<tmp>/proj/broker1/data`, which held `before.txt`; the
    temporary directory is one the containers' user can walk down (pytest's is not)."""
    missing = fuse_unavailable()
    if missing:
        pytest.fail(f"the disk layer needs FUSE here: {missing}", pytrace=False)
    root = Path(tempfile.mkdtemp(prefix="disk-layer-"))
    root.chmod(0o755)
    paths = LayerPaths(root, "proj", "broker1")
    paths.data.mkdir(parents=True)
    (paths.data / "before.txt").write_text("made before the mount")
    start_layer(paths)
    try:
        yield paths
    finally:
        stop_layer(paths)
        shutil.rmtree(root)


def _write(path: Path, data: bytes) -> None:
    """One write(2) of `data` into a new `path` (no buffer that retries on close)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def test_files_pass_through_and_stay_once_the_layer_is_gone(layer: LayerPaths) -> None:
    assert host_layers("proj") == {"proj/broker1": layer.data}
    assert (layer.data / "before.txt").read_text() == "made before the mount"
    (layer.data / "topic-0").mkdir()
    _write(layer.data / "topic-0" / "0.log", b"record")
    os.replace(layer.data / "topic-0" / "0.log", layer.data / "topic-0" / "1.log")
    assert sorted(os.listdir(layer.data / "topic-0")) == ["1.log"]
    stop_layer(layer)
    assert host_layers("proj") == {}
    assert (layer.data / "topic-0" / "1.log").read_bytes() == b"record"


def test_files_the_container_user_makes_are_its_own(layer: LayerPaths) -> None:
    os.chown(layer.base, CONTAINER_UID, CONTAINER_UID)
    subprocess.run(
        ["/bin/sh", "-c", 'mkdir "$1/dir" && echo x > "$1/mine.txt"', "sh", str(layer.data)],
        user=CONTAINER_UID,
        group=CONTAINER_UID,
        extra_groups=[],
        check=True,
    )
    owners = {(layer.data / n).stat().st_uid for n in ("mine.txt", "dir")}
    assert owners == {CONTAINER_UID}
    stop_layer(layer)
    assert {(layer.data / n).stat().st_uid for n in ("mine.txt", "dir")} == {CONTAINER_UID}


def test_an_error_rule_fails_matching_writes_with_eio(layer: LayerPaths) -> None:
    control = LayerControl(layer.socket)
    control.set(LayerRules(errors=(ErrorRule("write", "*.log", "EIO", 1.0),)))
    with pytest.raises(OSError, match="Input/output error") as failed:
        _write(layer.data / "00.log", b"lost")
    assert failed.value.errno == errno.EIO
    _write(layer.data / "00.index", b"kept")
    stats = control.stats()
    assert stats.counters.failed["write"] == 1
    assert stats.counters.seen["write"] == 2
    before = control.reset()
    assert before.counters.failed["write"] == 1
    assert control.stats().rules.transparent
    _write(layer.data / "00.log", b"fine again")
    assert (layer.data / "00.log").read_bytes() == b"fine again"


def test_a_latency_rule_holds_fsync(layer: LayerPaths) -> None:
    control = LayerControl(layer.socket)
    control.set(LayerRules(latency=(LatencyRule("fsync", 200),)))
    with open(layer.data / "slow.log", "wb") as file:
        file.write(b"x")
        file.flush()
        began = time.monotonic()
        os.fsync(file.fileno())
        took = time.monotonic() - began
    assert took >= 0.2
    assert control.stats().counters.delayed["fsync"] >= 1


def test_a_budget_refuses_the_write_that_passes_it(layer: LayerPaths) -> None:
    control = LayerControl(layer.socket)
    control.set(LayerRules(budget_bytes=10))
    _write(layer.data / "a.log", b"12345678")
    with pytest.raises(OSError, match="No space left") as full:
        _write(layer.data / "b.log", b"12345")
    assert full.value.errno == errno.ENOSPC
    assert control.stats().counters.written_bytes == 8


def test_stopping_leaves_nothing_mounted_or_running(layer: LayerPaths) -> None:
    pid = LayerControl(layer.socket).stats().pid
    assert pid in daemons("proj/")
    stop_layer(layer)
    assert host_layers("proj") == {}
    assert daemons("proj/") == {}
    assert not Path(f"/proc/{pid}").exists()
    assert not layer.socket.exists()
    assert "proj/broker1" not in Path("/proc/self/mountinfo").read_text()


def test_lose_takes_back_what_was_written_since_the_last_fsync(layer: LayerPaths) -> None:
    control = LayerControl(layer.socket)
    control.set(LayerRules(lose_unsynced=True))
    segment = layer.data / "0.log"
    with open(segment, "wb") as file:
        file.write(b"synced;")
        file.flush()
        os.fsync(file.fileno())
        file.write(b"unsynced")
    checkpoint = layer.data / "hw-checkpoint"
    _write(layer.data / "hw-checkpoint.tmp", b"15\n")
    os.replace(layer.data / "hw-checkpoint.tmp", checkpoint)
    (layer.data / "before.txt").write_text("overwritten")
    lost = control.lose()
    assert lost.lost == (3, len(b"unsynced") + 3 + len("overwritten") + 21)
    assert lost.counters.lost_files == 3
    stop_layer(layer)  # no page cache of the mount left to read from
    assert segment.read_bytes() == b"synced;"
    assert checkpoint.read_bytes() == b""
    assert (layer.data / "before.txt").read_text() == "made before the mount"
