"""Every fault kind by name, and the way back from a fault's JSON description to the fault
(`fault_from_json`), used by the heal state, schedules and replays. A new kind is one
line in `KINDS`: its name and a class whose `from_json(data)` rebuilds it from
`describe()`. Pure; any thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from chaos.faults.base import Fault, FaultError
from chaos.faults.fields import BadFaultData
from chaos.faults.network import NETWORK_KINDS
from chaos.faults.process import Bounce, Kill, Pause, Stop
from chaos.faults.zookeeper import ZkLeaderKill, ZkPause


class UnknownKind(FaultError):
    """A fault kind that the catalog does not hold."""


class FaultClass(Protocol):
    """What `KINDS` maps a kind to: something that rebuilds a fault from its description."""

    def from_json(self, data: Mapping[str, Any]) -> Fault:
        """The fault that `describe()` returned `data` for; `BadFaultData` if it is not one."""
        ...


KINDS: Mapping[str, FaultClass] = {
    "kill": Kill,
    "stop": Stop,
    "pause": Pause,
    "bounce": Bounce,
    "zk-leader-kill": ZkLeaderKill,
    "zk-pause": ZkPause,
}
#: Network kinds rebuild through their builders (`chaos.faults.network.NETWORK_KINDS`).
BUILDERS: Mapping[str, Callable[[Mapping[str, Any]], Fault]] = {
    **{kind: cls.from_json for kind, cls in KINDS.items()},
    **NETWORK_KINDS,
}


def fault_from_json(kind: str, data: Mapping[str, Any]) -> Fault:
    """Rebuild a fault of `kind` from its `describe()` output."""
    try:
        build = BUILDERS[kind]
    except KeyError:
        raise UnknownKind(f"unknown fault kind {kind!r}; known: {', '.join(BUILDERS)}") from None
    if not isinstance(data, Mapping):
        raise BadFaultData(f"{kind}: a fault description must be a JSON object, got {data!r}")
    return build(data)
