"""Extracting a container's archive (`chaos.cluster.container_files.extract`), as docker's
`get_archive` streams it in chunks: the files and directories a predicate keeps land under
the target, named relative to the archive's top; links and names that climb out are
skipped.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path, PurePosixPath

from chaos.cluster.container_files import extract


def archive(files: dict[str, bytes], links: dict[str, str]) -> bytes:
    """A tar with `data/` at its top, `files` (name -> content) and symlinks under it."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        top = tarfile.TarInfo("data")
        top.type = tarfile.DIRTYPE
        tar.addfile(top)
        for name, content in files.items():
            info = tarfile.TarInfo(f"data/{name}")
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
        for name, target in links.items():
            info = tarfile.TarInfo(f"data/{name}")
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return out.getvalue()


def chunks(data: bytes, size: int = 7) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def test_the_kept_members_land_under_the_target(tmp_path: Path) -> None:
    data = archive(
        {"t-0/0.log": b"records", "t-0/hw": b"3", "other-0/0.log": b"no", "../evil": b"x"},
        {"t-0/link": "/etc/passwd"},
    )
    written = extract(chunks(data), tmp_path, lambda name: name.parts[0] == "t-0")
    assert written == 2
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "t-0",
        "t-0/0.log",
        "t-0/hw",
    ]
    assert (tmp_path / "t-0" / "0.log").read_bytes() == b"records"


def test_names_are_relative_to_the_archive_top(tmp_path: Path) -> None:
    seen: list[PurePosixPath] = []

    def keep(name: PurePosixPath) -> bool:
        seen.append(name)
        return True

    extract(chunks(archive({"a/b": b""}, {})), tmp_path, keep)
    assert seen == [PurePosixPath("a/b")]
    assert (tmp_path / "a" / "b").read_bytes() == b""
