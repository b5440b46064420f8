"""The project's ZooKeeper servers seen from the host: `ZkServers` (mixed into
`ClusterHandle`) finds their published client ports and asks them four-letter words.

The compose cluster's servers listen on TLS only, so the words go over TLS with the
tools' client certificate (`security.zk_tls`) when the handle has one. Blocking; the
caller's thread (the injector's, or a CLI's main thread).
"""

from __future__ import annotations

import ssl

from docker.models.containers import Container

from chaos.cluster import endpoints
from chaos.errors import FaultFailed, UnknownTarget
from security.zk_tls import ZkTls
from zkdata.fourletter import four_letter_word, server_mode

ZK_CLIENT_PORT = "2181/tcp"
#: How long `cons` may take: a frozen server does not answer, and a spell cannot wait.
CONS_TIMEOUT_S = 0.3


class ZkServers:
    """The ZooKeeper methods of `ClusterHandle`; it supplies `_container`, `zk_servers`,
    `_project` and `_zk_tls`."""

    _project: str
    _zk_tls: ZkTls | None

    def _container(self, service: str) -> Container:
        raise NotImplementedError

    def zk_servers(self) -> dict[int, str]:
        raise NotImplementedError

    def zk_mode(self, service: str) -> str:
        """The server's mode by `srvr` on its published client port: `leader`, `follower`,
        `standalone`, `not serving` or `unreachable` (also when it is not published)."""
        address = self._zk_address(service)
        if address is None:
            return "unreachable"
        return server_mode(*address, tls=self._words_context())

    def zk_connections(self, service: str) -> str | None:
        """The server's `cons` listing on its published client port; None when it does not
        answer within `CONS_TIMEOUT_S` (a frozen server) or is not published."""
        address = self._zk_address(service)
        if address is None:
            return None
        try:
            return four_letter_word(*address, "cons", CONS_TIMEOUT_S, self._words_context())
        except OSError:
            return None

    def published_zk_connect(self) -> str:
        """The connect string of the ZooKeeper servers' client ports as published now
        (servers that do not run publish none); `FaultFailed` when none is published."""
        addresses = []
        for service in sorted(self.zk_servers().values()):
            address = self._published(self._container(service))
            if address is not None:
                addresses.append(f"{address[0]}:{address[1]}")
        if not addresses:
            raise FaultFailed(f"no ZooKeeper server of {self._project} publishes its port")
        return ",".join(addresses)

    def _zk_address(self, service: str) -> tuple[str, int] | None:
        if service not in self.zk_servers().values():
            raise UnknownTarget(f"{service!r} is not a ZooKeeper server of {self._project}")
        return self._published(self._container(service))

    def _words_context(self) -> ssl.SSLContext | None:
        return self._zk_tls.ssl_context() if self._zk_tls is not None else None

    @staticmethod
    def _published(container: Container) -> tuple[str, int] | None:
        address = endpoints.published(container.attrs, ZK_CLIENT_PORT)
        if address is None:
            return None
        host, _, port = address.rpartition(":")
        return host, int(port)
