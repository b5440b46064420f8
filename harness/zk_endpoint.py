"""`ZkEndpoint`: where a tool's ZooKeeper clients connect and how: the connect string
(with its chroot, if any) and the TLS they present (None: plaintext). What benchmarks and
tests hand around instead of a bare connect string, so that a secured ensemble
(`ZkEnsemble(..., tls=...)`) is reached the same way as a plain one. Values; `open`
blocks the calling thread until connected.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kazoo.client import KazooClient

from harness.zk_ensemble import ZkEnsemble, open_client
from security.zk_tls import ZkTls

__all__ = ["ZkEndpoint"]


@dataclass(frozen=True, slots=True)
class ZkEndpoint:
    """ZooKeeper at `connect`, reached over `tls` (None: plaintext)."""

    connect: str
    tls: ZkTls | None = None

    @classmethod
    def of(cls, ensemble: ZkEnsemble, chroot: str = "") -> ZkEndpoint:
        """The endpoint of `ensemble` (every member), under `chroot`, with its TLS."""
        return cls(ensemble.connect_string(chroot), ensemble.tls)

    @property
    def tls_dir(self) -> Path | None:
        """The TLS directory a broker is given (`--zk-tls-dir`); None: plaintext."""
        return self.tls.directory if self.tls is not None else None

    def within(self, chroot: str) -> ZkEndpoint:
        """The same servers under `chroot` (appended to this endpoint's own)."""
        if not chroot.startswith("/"):
            raise ValueError(f"chroot must start with '/', got {chroot!r}")
        return ZkEndpoint(self.connect + chroot, self.tls)

    @contextmanager
    def open(self, timeout: float = 10) -> Iterator[KazooClient]:
        """A started client (`harness.zk_ensemble.open_client`), closed on exit."""
        with open_client(self.connect, timeout, self.tls) as client:
            yield client
