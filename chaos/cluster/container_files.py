"""Files of a container, running or stopped, through docker's archive API
(`docker cp`): `ContainerFiles` (mixed into `ClusterHandle`) copies a path out as a tar
stream and a tar into a directory; `extract` writes the members of such a stream that a
predicate keeps under a host directory (pure file I/O); `file_archive` and
`archived_files` make and read small archives in memory.

A stopped container's filesystem is still there, so this is how the host reads what a
broker that is down left on disk (its partition logs, for the replica audit) and how a
test changes it before the broker starts again.

Blocking docker calls on the caller's thread.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath

from docker.errors import DockerException
from docker.models.containers import Container

from chaos.errors import FaultFailed

#: Bytes per chunk of an archive streamed out of a container.
CHUNK_BYTES = 1 << 20


class ContainerFiles:
    """The archive methods of `ClusterHandle`; it supplies `_container` (which checks that
    the container is the project's)."""

    def _container(self, service: str) -> Container:
        raise NotImplementedError

    def copy_out(self, service: str, path: str) -> Iterator[bytes]:
        """`path` of the service's container as a tar stream (its last component is the
        top of every member's name); `FaultFailed` when docker cannot give it."""
        try:
            chunks, _ = self._container(service).get_archive(path, chunk_size=CHUNK_BYTES)
        except DockerException as exc:
            raise FaultFailed(f"docker cp {service}:{path}: {exc}") from exc
        return iter(chunks)

    def copy_in(self, service: str, directory: str, archive: bytes) -> None:
        """Unpack the tar `archive` into `directory` of the service's container, replacing
        files of the same names; `FaultFailed` when docker refuses."""
        try:
            done = self._container(service).put_archive(directory, archive)
        except DockerException as exc:
            raise FaultFailed(f"docker cp into {service}:{directory}: {exc}") from exc
        if not done:
            raise FaultFailed(f"docker cp into {service}:{directory} failed")


def file_archive(name: str, data: bytes, mode: int = 0o644) -> bytes:
    """A tar holding one regular file `name` with `data`, for `copy_in`."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        info = tarfile.TarInfo(name)
        info.size, info.mode = len(data), mode
        archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def archived_files(chunks: Iterable[bytes]) -> dict[str, bytes]:
    """The regular files of the tar stream `chunks` (small ones: read into memory), by
    member name. `tarfile.TarError` on a broken stream."""
    found = {}
    with tarfile.open(fileobj=io.BufferedReader(_Stream(chunks)), mode="r|") as archive:
        for member in archive:
            source = archive.extractfile(member) if member.isfile() else None
            if source is not None:
                found[member.name] = source.read()
    return found


class _Stream(io.RawIOBase):
    """The chunks of an archive as a readable file."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._left = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self._left:
            self._left = next(self._chunks, b"")
            if not self._left:
                return 0
        n = min(len(buffer), len(self._left))
        buffer[:n] = self._left[:n]
        self._left = self._left[n:]
        return n


def extract(chunks: Iterable[bytes], into: Path, keep: Callable[[PurePosixPath], bool]) -> int:
    """Write the regular files and directories of the tar stream `chunks` whose names
    `keep` accepts (each name relative to the archive's top) under `into`; how many were
    written. Links, devices and names that would leave `into` are skipped. `tarfile.TarError` on a
    broken stream."""
    written = 0
    with tarfile.open(fileobj=io.BufferedReader(_Stream(chunks)), mode="r|") as archive:
        for member in archive:
            name = PurePosixPath(member.name)
            inner = PurePosixPath(*name.parts[1:])
            if not inner.parts or ".." in inner.parts or name.is_absolute() or not keep(inner):
                continue
            target = into.joinpath(*inner.parts)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                written += 1
            elif member.isfile():
                target.parent.mkdir(parents=True, exist_ok=True)
                source = archive.extractfile(member)
                if source is not None:
                    target.write_bytes(source.read())
                    written += 1
    return written
