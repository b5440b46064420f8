"""`cert-rotation`: the cluster's CA rotated while it serves (`security.rolling`: a new CA
trusted beside the old one, new certificates for every server and the tools, the old CA
retired; each pass restarts the servers one at a time), through the runner's handle.

    start        the whole rotation, on the injector's thread (minutes: three passes of a
                 graceful stop and a start of every ZooKeeper server and broker, each
                 waited for until it serves again)
    took_effect  the host's CA is another than before the start, and every target
                 accepts the host's new client certificate and presents one of the new CA
    stop         finishes a rotation that stopped halfway (it resumes from the phase its
                 files are in); nothing when none is under way
    undone       no rotation under way, `ca.crt` holds one CA, and every target accepts
                 the host's client certificate and presents one of that CA

The host's files (`FaultTarget.tls_dir`, the repository's `.secrets/tls`) are the ones
the containers mount, so the tools keep connecting: the run's client follows them
(`security.tls_files.FollowedIdentity`), and the handle's ZooKeeper session reads them on
every reconnection. A broker is stopped, waited for until its registration is gone, and
started; it serves again once registered; a ZooKeeper server once it is in the quorum.
Each check probes a target on its address on the project network with the host's client
certificate (`security.tls_probe`). Runs on the injector's thread.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

from chaos.errors import FaultFailed
from chaos.faults.base import Check, FaultTarget
from chaos.faults.fields import TargetedFault
from chaos.faults.params import ParamRule, Scalar
from security.rolling import RollingCluster, RotationError, rotate
from security.rotation import pem_certificates, rolling_order
from security.rotation_files import phase_in_place
from security.secret_files import SecretFileError
from security.tls_files import CA, CLIENT, TlsFiles
from security.tls_probe import GRPC, ZOOKEEPER, client_context, refusal

#: The graceful stop's timeout: a broker's controlled shutdown (compose's stop_grace_period).
STOP_TIMEOUT_S = 30.0
#: How long a stopped broker's registration may take to go.
DEREGISTER_S = 30.0
ZK_PORT = 2181
BROKER_PORT = 9092
_SERVING_MODES = frozenset({"leader", "follower", "standalone"})


def _is_zookeeper(service: str) -> bool:
    return service.startswith("zk")


def _broker_id(service: str) -> int:
    return int(service.removeprefix("broker"))


def refusals(cluster: FaultTarget, tls_dir: Path, services: Sequence[str]) -> list[str]:
    """`service: why` for each of `services` that refuses the host's client certificate
    or presents one the host's CA does not sign (probed on its project address)."""
    found = []
    for service in services:
        try:
            ip = cluster.ip(service)
        except FaultFailed as exc:
            found.append(f"{service}: {exc}")
            continue
        zk = _is_zookeeper(service)
        address = (ip, ZK_PORT if zk else BROKER_PORT)
        context = client_context(tls_dir, CLIENT)
        why = refusal(address, service, context, ZOOKEEPER if zk else GRPC)
        if why is not None:
            found.append(f"{service}: {why}")
    return found


def rolling_view(cluster: FaultTarget, services: tuple[str, ...], tls_dir: Path) -> RollingCluster:
    """`services` of the runner's handle as a rotation restarts them."""
    return _Rolling(cluster, services, tls_dir)


@dataclass(frozen=True, slots=True)
class _Rolling:
    """`security.rolling.RollingCluster` over the runner's handle."""

    cluster: FaultTarget
    services: tuple[str, ...]
    tls_dir: Path

    def zookeepers(self) -> tuple[str, ...]:
        return rolling_order([s for s in self.services if _is_zookeeper(s)], None)

    def brokers(self) -> tuple[str, ...]:
        return rolling_order([s for s in self.services if not _is_zookeeper(s)], None)

    def zk_leader(self) -> str | None:
        return next((s for s in self.zookeepers() if self.cluster.zk_mode(s) == "leader"), None)

    def controller(self) -> str | None:
        try:
            held = self.cluster.controller_id()
        except FaultFailed:
            return None
        return None if held is None else f"broker{held}"

    def restart(self, service: str) -> None:
        self.cluster.stop(service, STOP_TIMEOUT_S)
        if not _is_zookeeper(service):
            deadline = time.monotonic() + DEREGISTER_S
            while self._registered(service) and time.monotonic() < deadline:
                time.sleep(0.2)
        self.cluster.start(service)

    def _registered(self, service: str) -> bool:
        try:
            return self.cluster.broker_registered(_broker_id(service))
        except FaultFailed:
            return True

    def not_serving(self, service: str) -> str | None:
        status = self.cluster.status(service)
        if status != "running":
            return f"container {status}"
        if _is_zookeeper(service):
            mode = self.cluster.zk_mode(service)
            if mode not in _SERVING_MODES:
                return f"ZooKeeper {mode}"
        elif not self._registered(service):
            return "not registered"
        found = refusals(self.cluster, self.tls_dir, (service,))
        return found[0] if found else None


@dataclass(frozen=True, slots=True)
class CertRotation(TargetedFault):
    """Rotate the CA under the targets (every service; see the module docstring)."""

    KIND: ClassVar[str] = "cert-rotation"
    PARAMS: ClassVar[tuple[ParamRule, ...]] = ()
    _ca_before: dict[str, bytes] = field(default_factory=dict, compare=False, repr=False)
    _said: list[dict[str, Any]] = field(default_factory=list, compare=False, repr=False)

    @classmethod
    def from_params(cls, targets: tuple[str, ...], params: Mapping[str, Scalar]) -> Self:
        """The fault of a schedule step (it takes no params)."""
        return cls(targets)

    def _tls_dir(self, cluster: FaultTarget) -> Path:
        found = cluster.tls_dir()
        if found is None:
            raise FaultFailed("cert-rotation: the cluster speaks plaintext; nothing to rotate")
        return found

    def _rotate(self, cluster: FaultTarget) -> None:
        tls_dir = self._tls_dir(cluster)
        rolling = rolling_view(cluster, self.targets, tls_dir)
        try:
            rotate(tls_dir, rolling, self._say)
        except (RotationError, SecretFileError, OSError) as exc:
            raise FaultFailed(f"cert-rotation: {exc}") from exc

    def _say(self, line: str) -> None:
        self._said.append({"ts": int(time.time() * 1000), "step": line})

    def trace(self) -> Sequence[Mapping[str, Any]]:
        """Each step of the rotation with its time (ms since the epoch)."""
        return list(self._said)

    def start(self, cluster: FaultTarget) -> None:
        """Remember the CA, then rotate it (blocks until the rotation is done)."""
        self._ca_before["ca"] = TlsFiles(self._tls_dir(cluster)).cert(CA).read_bytes()
        self._rotate(cluster)

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Another CA than before, and every target serving with it."""
        before = self._ca_before.get("ca")
        if before is None:
            return Check(False, "the CA before the rotation is unknown")
        now = TlsFiles(self._tls_dir(cluster)).cert(CA).read_bytes()
        if pem_certificates(now) == pem_certificates(before):
            return Check(False, "the CA did not change")
        return self.undone(cluster)

    def stop(self, cluster: FaultTarget) -> None:
        """Finish a rotation left halfway; nothing else."""
        files = TlsFiles(self._tls_dir(cluster))
        try:
            under_way = phase_in_place(files) is not None
        except SecretFileError as exc:
            raise FaultFailed(f"cert-rotation: {exc}") from exc
        if under_way:
            self._rotate(cluster)

    def undone(self, cluster: FaultTarget) -> Check:
        """One CA, no rotation under way, every target accepting the host's identity."""
        tls_dir = self._tls_dir(cluster)
        files = TlsFiles(tls_dir)
        if files.rotation_state.exists():
            return Check(False, f"a rotation is under way in {tls_dir}")
        count = len(pem_certificates(files.cert(CA).read_bytes()))
        if count != 1:
            return Check(False, f"{files.cert(CA)} holds {count} certificates")
        found = refusals(cluster, tls_dir, self.targets)
        if found:
            return Check(False, "; ".join(found))
        return Check(True, f"{len(self.targets)} services serve with the CA of {tls_dir}")
