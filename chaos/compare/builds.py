"""A build of the broker image from any source of this repository: a git commit (any ref)
or a directory holding a work tree of it, uncommitted changes included.

    source = stage("HEAD~1", stage_root)       # git archive of the commit, or a copy of the dir
    build = build_image(source, say)          # testbed-broker:cmp-<hash>, reused if present

`stage` copies what the broker image is made of (the packages the source's own
`scripts/build-images.sh` lists, its `docker/broker/Dockerfile`, its `pyproject.toml`'s
dependencies) into a fresh directory, generates its gRPC code from its `proto/`
(`scripts/gen-proto.sh`), lays out the image's context and checks that every Python file
of it compiles, all before Docker is asked anything. `build_image` tags the image `cmp-`
and a hash of that context, the base image and the image user, and runs the same `docker
build` as `scripts/build-images.sh` on top of `testbed-base` and the host's wheelhouse
(`.build/broker/wheels`, which `make images` fills), so that only the source layer is new
and a build takes seconds; the ZooKeeper image is the repository's, tagged alike so that
docker-compose.yml's `TESTBED_TAG` picks both. An image of the same tag whose
`testbed.inputs` label matches is reused as it is.

A bug switch is one more way to make a build: `switched(build, "switches:kafka-1188")` is
the same images run with the historical bug switch on (`BUG_SWITCHES`, docs/bugs.md), as
the bug hunt's buggy build is (`switch_env`).

`BuildError` (a `RunSetupError`) when the source cannot be read, does not compile, needs
other dependencies than the wheelhouse holds, or its image does not build; its message
holds the log. Subprocesses on the caller's thread.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bugs import CATALOG
from chaos.run.setup import RunSetupError

__all__ = [
    "REPO_ROOT",
    "SWITCHES",
    "Build",
    "BuildError",
    "Source",
    "build_image",
    "compile_all",
    "stage",
    "switch_env",
    "switched",
    "switches_of",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
BASE_IMAGE = "testbed-base:latest"
ZK_IMAGE = "testbed-zookeeper"
BROKER_IMAGE = "testbed-broker"
#: The lines of a failed build's log that its error keeps.
LOG_TAIL = 60
#: Where a staged source's image context goes, inside the staged tree.
CONTEXT = ".image"
_PACKAGES = re.compile(r"^for pkg in (.*); do$", re.MULTILINE)


class BuildError(RunSetupError):
    """A source that cannot be staged or built; the message holds the log."""


@dataclass(frozen=True, slots=True)
class Source:
    """A staged source: what it was named (`spec`), what it is (a commit or a directory),
    and where its copy is."""

    spec: str
    description: str
    root: Path


@dataclass(frozen=True, slots=True)
class Build:
    """A built source: the `TESTBED_TAG` its images carry, and what its brokers' compose
    environment adds (the bug switches a switched build runs with)."""

    source: Source
    tag: str
    reused: bool
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def description(self) -> str:
        """The source, and the bug switches if any."""
        switches = self.env.get("BUG_SWITCHES")
        if not switches:
            return self.source.description
        return f"{self.source.description} with bug switch {switches}"


#: How a source names a build with bug switches on: `switches:kafka-1188[,...]`.
SWITCHES = "switches:"


def switch_env(switches: tuple[str, ...]) -> dict[str, str]:
    """The compose environment of a build with `switches` on (none: the fixed build)."""
    return {
        "BUG_SWITCHES": ",".join(switches),
        "BUG_SWITCHES_CONTEXT": "chaos" if switches else "",
    }


def switches_of(spec: str) -> tuple[str, ...] | None:
    """The bug switches a `switches:a,b` source names (None: another kind of source);
    `BuildError` for a switch the catalog does not hold."""
    if not spec.startswith(SWITCHES):
        return None
    names = tuple(n.strip() for n in spec[len(SWITCHES) :].split(",") if n.strip())
    unknown = [n for n in names if n not in {bug.name for bug in CATALOG}]
    if unknown or not names:
        known = ", ".join(bug.name for bug in CATALOG)
        raise BuildError(f"{spec}: no bug switch {', '.join(unknown) or '(none)'}; known: {known}")
    return names


def switched(build: Build, switches: tuple[str, ...]) -> Build:
    """`build` run with the bug `switches` on."""
    return Build(build.source, build.tag, True, switch_env(switches))


def _run(command: list[str], cwd: Path, what: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        log = (done.stdout + done.stderr).strip().splitlines()[-LOG_TAIL:]
        raise BuildError(
            f"{what}: `{' '.join(command)}` exited {done.returncode}:\n" + "\n".join(log)
        )
    return done.stdout


def stage(spec: str, under: Path) -> Source:
    """The source `spec` (a directory, else a git ref of this repository) staged in a new
    directory below `under`."""
    root = Path(tempfile.mkdtemp(prefix="src-", dir=under))
    try:
        return _stage_in(spec, root)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


def _stage_in(spec: str, root: Path) -> Source:
    given = Path(spec)
    if given.is_dir():
        tree = given.resolve()
        if not (tree / "broker_node").is_dir():
            raise BuildError(f"{spec}: not a work tree of this repository (no broker_node/)")
        description = f"work tree {tree}"
        for name in (*_package_list(tree), "proto", "docker", "scripts", "pyproject.toml"):
            _copy(tree / name, root / name)
    else:
        commit = _run(
            ["git", "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"],
            REPO_ROOT,
            f"{spec}: neither a directory nor a commit of {REPO_ROOT}",
        ).strip()
        description = f"commit {commit[:12]} ({spec})"
        archive = subprocess.run(
            ["git", "archive", commit], cwd=REPO_ROOT, capture_output=True, check=False
        )
        if archive.returncode != 0:
            raise BuildError(f"{spec}: git archive failed: {archive.stderr.decode().strip()}")
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    if (root / "proto").is_dir():  # regenerates only what is older than proto/
        _run(
            [str(REPO_ROOT / "scripts" / "gen-proto.sh"), str(_python())],
            root,
            f"{spec}: gRPC code",
        )
    _image_context(root, description)
    return Source(spec, description, root)


def _image_context(tree: Path, description: str) -> None:
    """The broker image's context in `tree / CONTEXT`, but the wheels: the packages and
    the Dockerfile; `BuildError` when a package is missing or a file does not compile."""
    context = tree / CONTEXT
    (context / "src").mkdir(parents=True)
    for package in dict.fromkeys((*_package_list(tree), "testbed_rpc")):
        if not (tree / package).is_dir():
            raise BuildError(f"{description}: package {package} is missing")
        _copy(tree / package, context / "src" / package)
    try:
        compile_all(context / "src")
    except BuildError as exc:
        raise BuildError(f"{description}: {exc}") from None
    dockerfile = tree / "docker" / "broker" / "Dockerfile"
    if not dockerfile.exists():
        raise BuildError(f"{description}: no docker/broker/Dockerfile")
    shutil.copy2(dockerfile, context / "Dockerfile")
    if (tree / "docker" / "clock").is_dir():
        _clock(tree / "docker" / "clock", context / "clock", description)


def _clock(sources: Path, target: Path, description: str) -> None:
    """The broker image's faked clock (docker/clock/README.md), staged as
    `scripts/build-images.sh` stages it: the source's shim compiled on the host beside the
    libfaketime package `make images` downloaded."""
    packages = sorted((REPO_ROOT / ".build" / "clock").glob("libfaketime_*.deb"))
    if not packages:
        raise BuildError(
            f"no libfaketime package in {REPO_ROOT / '.build' / 'clock'}; run `make images`"
        )
    target.mkdir()
    shutil.copy2(packages[-1], target / packages[-1].name)
    shutil.copy2(sources / "install.sh", target / "install.sh")
    shim = target / "clock_nanosleep_shim.so"
    compiler = os.environ.get("CC", "cc")
    command = [compiler, "-O2", "-shared", "-fPIC", "-o", str(shim)]
    _run(
        [*command, str(sources / "clock_nanosleep_shim.c"), "-ldl"],
        sources,
        f"{description}: the clock shim does not compile",
    )


def _python() -> Path:
    return REPO_ROOT / ".venv" / "bin" / "python"


def _copy(source: Path, target: Path) -> None:
    if source.is_dir():
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(source, target, ignore=ignore, symlinks=True)
    elif source.exists():
        shutil.copy2(source, target)


def _package_list(tree: Path) -> list[str]:
    """The packages the tree's broker image carries (its build script's `for pkg in`)."""
    script = tree / "scripts" / "build-images.sh"
    found = _PACKAGES.search(script.read_text()) if script.exists() else None
    if found is None:
        raise BuildError(f"{tree}: no `for pkg in ...` line in scripts/build-images.sh")
    return found.group(1).split()


def _requirements(tree: Path) -> str:
    import tomllib

    try:
        with (tree / "pyproject.toml").open("rb") as f:
            return "\n".join(tomllib.load(f)["project"]["dependencies"]) + "\n"
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise BuildError(f"{tree}: pyproject.toml has no dependencies: {exc}") from None


def compile_all(src: Path) -> None:
    """`BuildError` naming each Python file of `src` that does not compile."""
    broken = []
    for path in sorted(src.rglob("*.py")):
        try:
            compile(path.read_bytes(), str(path.relative_to(src)), "exec")
        except (SyntaxError, ValueError) as exc:
            broken.append(f"{path.relative_to(src)}: {exc}")
    if broken:
        raise BuildError("the source does not compile:\n" + "\n".join(broken[:LOG_TAIL]))


def _hash_dir(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _label(image: str) -> str | None:
    done = subprocess.run(
        ["docker", "image", "inspect", "-f", '{{index .Config.Labels "testbed.inputs"}}', image],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def build_image(source: Source, say: Callable[[str], None] = print) -> Build:
    """The broker (and ZooKeeper) images of `source` under their content tag."""
    tree = source.root
    context = tree / CONTEXT
    owner = _run(
        [str(REPO_ROOT / "scripts" / "container-user.sh")], REPO_ROOT, "image user"
    ).strip()
    base = _label(BASE_IMAGE)
    if base is None or _label(f"{ZK_IMAGE}:latest") is None:
        raise BuildError(f"{BASE_IMAGE} or {ZK_IMAGE}:latest is missing; run `make images`")
    inputs = hashlib.sha256(f"{base}\nuser {owner}\n{_hash_dir(context)}".encode()).hexdigest()
    tag = f"cmp-{inputs[:12]}"
    if _label(f"{BROKER_IMAGE}:{tag}") == inputs[:16] and _label(f"{ZK_IMAGE}:{tag}") is not None:
        say(f"{source.description}: image {BROKER_IMAGE}:{tag} exists, reused")
        return Build(source, tag, reused=True)
    _wheels(tree, context / "wheels")
    say(f"{source.description}: building {BROKER_IMAGE}:{tag}")
    uid, gid = owner.split(":")
    _run(
        [
            "docker", "build", "--label", f"testbed.inputs={inputs[:16]}",
            "--build-arg", f"TESTBED_UID={uid}", "--build-arg", f"TESTBED_GID={gid}",
            "-t", f"{BROKER_IMAGE}:{tag}", str(context),
        ],
        tree,
        f"{source.description}: the broker image does not build",
        # the legacy builder resolves FROM against local images only (nothing is pulled)
        env={**os.environ, "DOCKER_BUILDKIT": "0"},
    )  # fmt: skip
    _run(["docker", "tag", f"{ZK_IMAGE}:latest", f"{ZK_IMAGE}:{tag}"], tree, "tagging ZooKeeper")
    return Build(source, tag, reused=False)


def _wheels(tree: Path, target: Path) -> None:
    """The host's wheelhouse hard-linked (or copied) into `target`, when it holds what the
    source's dependencies ask for."""
    wheelhouse = REPO_ROOT / ".build" / "broker" / "wheels"
    held = wheelhouse / "requirements.txt"
    wanted = _requirements(tree)
    if not held.exists():
        raise BuildError(f"no wheelhouse in {wheelhouse}; run `make images`")
    if held.read_text().strip() != wanted.strip():
        raise BuildError(
            f"the source's dependencies differ from the wheelhouse's ({held}); build it with "
            "`make images` in that tree"
        )
    target.mkdir()
    for wheel in wheelhouse.iterdir():
        try:
            os.link(wheel, target / wheel.name)
        except OSError:
            shutil.copy2(wheel, target / wheel.name)
