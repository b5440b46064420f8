"""Staging a build's source without Docker: a work tree is copied with what its image
needs (uncommitted changes included), a commit is read from git, and a source that is
neither, or that does not compile, is a `BuildError` that says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from chaos.compare import builds
from chaos.compare.builds import REPO_ROOT, BuildError, stage


def test_a_work_tree_is_staged_with_its_image_packages(tmp_path: Path) -> None:
    staged = stage(str(REPO_ROOT), tmp_path)
    assert staged.description == f"work tree {REPO_ROOT}"
    for name in ("broker_node", "controller", "testbed_rpc", "docker", "pyproject.toml"):
        assert (staged.root / name).exists(), name
    assert not (staged.root / "chaos").exists()  # not in the broker image
    assert not list(staged.root.rglob("__pycache__"))
    ours = (REPO_ROOT / "controller" / "active.py").read_text()
    assert (staged.root / "controller" / "active.py").read_text() == ours


def test_a_staged_work_tree_is_a_work_tree_again(tmp_path: Path) -> None:
    first = stage(str(REPO_ROOT), tmp_path)
    edited = first.root / "controller" / "active.py"
    edited.write_text(edited.read_text() + "\n# an uncommitted line\n")
    second = stage(str(first.root), tmp_path)
    assert (second.root / "controller" / "active.py").read_text().endswith("uncommitted line\n")


def test_a_commit_is_read_from_git(tmp_path: Path) -> None:
    staged = stage("HEAD", tmp_path)
    assert staged.description.startswith("commit ")
    assert "(HEAD)" in staged.description
    assert (staged.root / "broker_node" / "__main__.py").exists()
    assert (staged.root / "testbed_rpc" / "__init__.py").exists()  # generated from proto/


def test_neither_a_directory_nor_a_commit_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="neither a directory nor a commit"):
        stage("no-such-ref-anywhere", tmp_path)


def test_a_directory_that_is_no_work_tree_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(BuildError, match="not a work tree of this repository"):
        stage(str(tmp_path / "empty"), tmp_path)


def test_a_source_that_does_not_compile_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "controller").mkdir()
    (tmp_path / "controller" / "fine.py").write_text("x = 1\n")
    (tmp_path / "controller" / "broken.py").write_text("def elect(:\n")
    with pytest.raises(BuildError, match=r"does not compile:\ncontroller/broken.py"):
        builds.compile_all(tmp_path)


def test_a_staged_source_that_does_not_compile_is_refused_and_removed(tmp_path: Path) -> None:
    tree = stage(str(REPO_ROOT), tmp_path).root
    (tree / "controller" / "active.py").write_text("def broken(:\n")
    staging = tmp_path / "staging"
    staging.mkdir()
    with pytest.raises(BuildError, match=r"does not compile:\ncontroller/active.py"):
        stage(str(tree), staging)
    assert list(staging.iterdir()) == []


def test_a_bug_switch_is_a_head_build_of_the_same_images() -> None:
    assert builds.switches_of("HEAD") is None
    assert builds.switches_of("switches:kafka-1188, unclean-election") == (
        "kafka-1188",
        "unclean-election",
    )
    base = builds.Build(builds.Source("HEAD", "commit abc (HEAD)", Path("/x")), "cmp-1", True)
    head = builds.switched(base, ("kafka-1188",))
    assert head.tag == base.tag
    assert head.env == {"BUG_SWITCHES": "kafka-1188", "BUG_SWITCHES_CONTEXT": "chaos"}
    assert head.description == "commit abc (HEAD) with bug switch kafka-1188"
    assert base.description == "commit abc (HEAD)"


def test_an_unknown_bug_switch_is_refused() -> None:
    with pytest.raises(BuildError, match="no bug switch kafka-0; known: "):
        builds.switches_of("switches:kafka-0")
    with pytest.raises(BuildError, match=r"no bug switch \(none\)"):
        builds.switches_of("switches:")


def _host_build(root: Path, package: bool) -> Path:
    """A repository root whose `.build/clock` holds (or lacks) the libfaketime package."""
    (root / ".build" / "clock").mkdir(parents=True)
    if package:
        (root / ".build" / "clock" / "libfaketime_0.9.10-2.1_amd64.deb").write_bytes(b"!<arch>\n")
    return root


def test_the_faked_clock_is_staged_with_the_sources_own_shim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = stage(str(REPO_ROOT), tmp_path).root / "docker" / "clock"
    monkeypatch.setattr(builds, "REPO_ROOT", _host_build(tmp_path / "host", package=True))
    builds._clock(clock, tmp_path / "context", "work tree")
    staged = {p.name for p in (tmp_path / "context").iterdir()}
    assert staged == {"libfaketime_0.9.10-2.1_amd64.deb", "install.sh", "clock_nanosleep_shim.so"}
    assert (tmp_path / "context" / "clock_nanosleep_shim.so").read_bytes().startswith(b"\x7fELF")


def test_a_clock_shim_that_does_not_compile_or_a_missing_package_is_a_build_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = stage(str(REPO_ROOT), tmp_path).root / "docker" / "clock"
    monkeypatch.setattr(builds, "REPO_ROOT", _host_build(tmp_path / "bare", package=False))
    with pytest.raises(BuildError, match="no libfaketime package"):
        builds._clock(clock, tmp_path / "first", "work tree")
    monkeypatch.setattr(builds, "REPO_ROOT", _host_build(tmp_path / "host", package=True))
    (clock / "clock_nanosleep_shim.c").write_text("int broken(;\n")
    with pytest.raises(BuildError, match="the clock shim does not compile"):
        builds._clock(clock, tmp_path / "second", "work tree")
