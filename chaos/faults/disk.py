"""Disk faults on a broker's log directory, through its disk layer (`harness.disk_layer`):
a FUSE file system on the host mounted over the directory the broker's log directory is
bind-mounted from, transparent until a fault gives it rules. The broker's unchanged
storage code meets real errors and real latency.

- `disk-eio`: `op` (`write`, `read` or `fsync`) on paths matching `glob` fails with EIO,
  each with `probability`.
- `disk-slow`: every `op` (or every operation: `any`) is held `delay_ms`.
- `disk-full`: writes fail with ENOSPC once `budget_bytes` more bytes were written.

start sets the rules over the layer's control socket, after checking in the target's own
mount table (`/proc/<pid>/mountinfo`) that its log directory is that project's layer; a
cluster started without the layers (the plain fallback) makes start fail. took_effect
reads the layer's counters, which start from 0 with the rules: at least one operation
failed (`disk-eio`, `disk-full`) or was held (`disk-slow`); the detail adds the target's
state (a broker halts on its first log-directory error unless it runs with
`--on-log-dir-failure notify`). stop makes the layer transparent again; a broker whose
layer failed an operation has its log directory offline until it restarts (as in Kafka),
so stop starts a halted one and restarts one that kept running. undone: the layer holds no
rule and the target runs.

The layers themselves belong to the cluster (`harness.disk_layers`: mounted before the
containers start, unmounted once they are gone), not to a fault: a FUSE mount cannot be
slid under files a running broker holds open. Runs on the injector's thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self

from chaos.errors import FaultFailed
from chaos.faults.base import Check, FaultTarget
from chaos.faults.fields import BadFaultData, check_targets, no_extra_fields, targets_from
from chaos.faults.params import ParamRule, Scalar, number, positive_int
from chaos.faults.process import RUNNING
from harness.disk_layers import (
    DiskLayerError,
    LayerControl,
    LayerPaths,
    LayerStats,
    layer_root,
    mounted,
)
from harness.disk_rules import (
    ANY,
    MAX_LATENCY_MS,
    OPS,
    BadRules,
    ErrorRule,
    LatencyRule,
    LayerRules,
)

#: How long a broker whose log directory failed has to stop before it is killed.
RESTART_STOP_S = 10.0


def _probability(value: Scalar) -> bool:
    found = number(value)
    return found is not None and 0 < found <= 1


def _glob(value: Scalar) -> bool:
    return isinstance(value, str) and bool(value)


def _budget(value: Scalar) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _delay(value: Scalar) -> bool:
    return positive_int(value) and int(value or 0) <= MAX_LATENCY_MS


def mount_table(pid: int) -> str:
    """The mount table a process sees (`/proc/<pid>/mountinfo`); empty when it is gone."""
    try:
        return Path(f"/proc/{pid}/mountinfo").read_text() if pid else ""
    except OSError:
        return ""


def _control(cluster: FaultTarget, target: str) -> LayerControl:
    """The control socket of the project's layer for `target` (not checked)."""
    return LayerControl(LayerPaths(layer_root(), cluster.project, target).socket)


def behind_layer(cluster: FaultTarget, target: str) -> bool:
    """Whether `target`'s own mount table shows its project's layer (False for a target
    that does not run, or a cluster started without the layers)."""
    paths = LayerPaths(layer_root(), cluster.project, target)
    return paths.tag in mounted(mount_table(cluster.pid(target)))


def _layer(cluster: FaultTarget, target: str) -> LayerControl:
    """The control of the layer under `target`'s log directory; `FaultFailed` when the
    target's mount table shows none (the cluster was started without the layers)."""
    if not behind_layer(cluster, target):
        raise FaultFailed(
            f"{target}'s log directory is not behind a disk layer (start the cluster with "
            f"DISK_LAYER=1; docs/chaos.md, Disk faults)"
        )
    return _control(cluster, target)


def _stats(cluster: FaultTarget, target: str) -> LayerStats | None:
    """The layer's rules and counters; None when no layer answers (nothing to undo)."""
    try:
        return _control(cluster, target).stats()
    except DiskLayerError:
        return None


@dataclass(frozen=True, slots=True)
class DiskFault:
    """What the disk faults share: targets, rules for their layers, and the undo."""

    targets: tuple[str, ...]
    KIND: ClassVar[str] = ""
    #: The counter that proves the fault: `failed` or `delayed`.
    PROOF: ClassVar[str] = "failed"
    PARAMS: ClassVar[tuple[ParamRule, ...]] = ()

    def __post_init__(self) -> None:
        check_targets(self.targets, self.KIND)
        try:
            self.rules()
        except BadRules as exc:
            raise BadFaultData(f"{self.KIND}: {exc}") from None

    @property
    def kind(self) -> str:
        """The fault's kind name."""
        return self.KIND

    def rules(self) -> LayerRules:
        """What the targets' layers do while the fault lasts."""
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        """The kind's params (besides the targets)."""
        raise NotImplementedError

    @classmethod
    def from_params(cls, targets: tuple[str, ...], params: Mapping[str, Scalar]) -> Self:
        """The fault of a schedule step (`params` checked against `PARAMS`)."""
        return cls(targets, **{rule.name: params[rule.name] for rule in cls.PARAMS})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from `describe()`; unknown fields and bad values are refused."""
        no_extra_fields(data, {"targets", *(rule.name for rule in cls.PARAMS)}, cls.KIND)
        values = {rule.name: data.get(rule.name, rule.default) for rule in cls.PARAMS}
        for rule in cls.PARAMS:
            if not isinstance(values[rule.name], str | int | float) or not rule.check(
                values[rule.name]
            ):
                raise BadFaultData(f"{cls.KIND}: `{rule.name}` must be {rule.expects}")
        return cls.from_params(targets_from(data, cls.KIND), values)

    def describe(self) -> dict[str, Any]:
        """`targets` and the params."""
        return {"targets": list(self.targets), **self.params()}

    def start(self, cluster: FaultTarget) -> None:
        """Put the rules in force in every target's layer."""
        rules = self.rules()
        for target in self.targets:
            try:
                _layer(cluster, target).set(rules)
            except DiskLayerError as exc:
                raise FaultFailed(f"{self.KIND} on {target}: {exc}") from None

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Every target's layer holds the rules and has failed (or held) an operation
        since they were set."""
        return Check.all([self._effect(cluster, t) for t in self.targets])

    def _effect(self, cluster: FaultTarget, target: str) -> Check:
        stats = _stats(cluster, target)
        if stats is None:
            return Check(False, f"{target}: no disk layer answers")
        counters = stats.counters
        proof = counters.total(self.PROOF)
        return Check(
            stats.rules == self.rules() and proof > 0,
            f"{target} ({cluster.status(target)}): layer {self.PROOF} {proof} of "
            f"{counters.total('seen')} ops ({getattr(counters, self.PROOF)})",
        )

    def stop(self, cluster: FaultTarget) -> None:
        """Make every target's layer transparent; start or restart a target whose layer
        failed an operation (its log directory is offline until it restarts)."""
        for target in self.targets:
            try:
                failed = _control(cluster, target).reset().counters.total("failed")
            except DiskLayerError:
                continue  # no layer: nothing of the fault there
            status = cluster.status(target)
            if status != RUNNING and failed:
                cluster.start(target)
            elif failed:
                cluster.stop(target, RESTART_STOP_S)
                cluster.start(target)

    def undone(self, cluster: FaultTarget) -> Check:
        """No target's layer holds a rule, and every target runs."""
        checks = []
        for target in self.targets:
            stats = _stats(cluster, target)
            status = cluster.status(target)
            rules = "no layer" if stats is None else f"rules {stats.rules.to_json()}"
            clear = stats is None or stats.rules.transparent
            checks.append(Check(clear and status == RUNNING, f"{target} {status}, {rules}"))
        return Check.all(checks)


@dataclass(frozen=True, slots=True)
class DiskEio(DiskFault):
    """EIO on `op` for paths matching `glob`, each with `probability`."""

    op: str = "write"
    glob: str = "*"
    probability: float = 1.0
    KIND: ClassVar[str] = "disk-eio"
    PARAMS: ClassVar[tuple[ParamRule, ...]] = (
        ParamRule("op", "write", lambda v: v in OPS, "|".join(OPS)),
        ParamRule("glob", "*", _glob, "a non-empty path glob"),
        ParamRule("probability", 1.0, _probability, "in (0, 1]"),
    )

    def rules(self) -> LayerRules:
        """One error rule."""
        return LayerRules(errors=(ErrorRule(self.op, self.glob, "EIO", float(self.probability)),))

    def params(self) -> dict[str, Any]:
        """`op`, `glob`, `probability`."""
        return {"op": self.op, "glob": self.glob, "probability": self.probability}


@dataclass(frozen=True, slots=True)
class DiskSlow(DiskFault):
    """Every `op` (or every operation) held `delay_ms`."""

    op: str = ANY
    delay_ms: int = 100
    KIND: ClassVar[str] = "disk-slow"
    PROOF: ClassVar[str] = "delayed"
    PARAMS: ClassVar[tuple[ParamRule, ...]] = (
        ParamRule("op", ANY, lambda v: v in (*OPS, ANY), "|".join((*OPS, ANY))),
        ParamRule("delay_ms", 100, _delay, f"an integer in [1, {MAX_LATENCY_MS}]"),
    )

    def rules(self) -> LayerRules:
        """One latency rule."""
        return LayerRules(latency=(LatencyRule(self.op, self.delay_ms),))

    def params(self) -> dict[str, Any]:
        """`op`, `delay_ms`."""
        return {"op": self.op, "delay_ms": self.delay_ms}

    def stop(self, cluster: FaultTarget) -> None:
        """Make every target's layer transparent (a delay fails nothing: no restart)."""
        for target in self.targets:
            try:
                _control(cluster, target).reset()
            except DiskLayerError:
                continue


@dataclass(frozen=True, slots=True)
class DiskFull(DiskFault):
    """ENOSPC on writes once `budget_bytes` more bytes were written."""

    budget_bytes: int = 0
    KIND: ClassVar[str] = "disk-full"
    PARAMS: ClassVar[tuple[ParamRule, ...]] = (
        ParamRule("budget_bytes", 0, _budget, "an integer >= 0"),
    )

    def rules(self) -> LayerRules:
        """The budget."""
        return LayerRules(budget_bytes=self.budget_bytes)

    def params(self) -> dict[str, Any]:
        """`budget_bytes`."""
        return {"budget_bytes": self.budget_bytes}


#: The kinds that act through the disk layers: a cluster without them cannot take one.
DISK_KINDS = frozenset({DiskEio.KIND, DiskSlow.KIND, DiskFull.KIND})
