"""Running a command inside one of the project's containers: `ContainerExec` (mixed into
`ClusterHandle`), as the clock faults rewrite a container's clock file and read its clock.

Blocking docker calls on the caller's thread (the injector's, or a clock strobe's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from docker.errors import DockerException
from docker.models.containers import Container

from chaos.errors import FaultFailed


class ContainerExec:
    """The `exec` method of `ClusterHandle`; it supplies `_container` (which checks that the
    container is the project's)."""

    def _container(self, service: str) -> Container:
        raise NotImplementedError

    def exec(self, service: str, argv: Sequence[str], env: Mapping[str, str] | None = None) -> str:
        """Run `argv` as root in the container and wait: its output; `FaultFailed` unless 0."""
        try:
            code, out = self._container(service).exec_run(list(argv), user="root", environment=env)
        except DockerException as exc:
            raise FaultFailed(f"docker exec {service}: {exc}") from exc
        if code != 0:
            raise FaultFailed(f"{service}: {argv[0]} exited {code}: {out.decode()[:200]}")
        return str(out.decode(errors="replace"))
