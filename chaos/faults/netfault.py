"""What every network fault shares: its targets, a kind, a description that rebuilds it,
and the id its traces are tagged with (`testbed-chaos:<fault id>` on every rule).

The id is derived from the kind and the canonical JSON of the description, so a fault
rebuilt from `faults.jsonl` or the heal state finds and deletes exactly the rules (and
proxies) of the fault that was started.

Thread-safety: immutable values; any thread.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from chaos.faults.base import Check, FaultTarget
from chaos.faults.fields import BadFaultData
from chaos.faults.netns import leftovers_everywhere, remove_everywhere
from chaos.faults.rules import fault_id


@dataclass(frozen=True, slots=True)
class NetworkFault:
    """Base of the network faults: `targets` (services) and the kind's parameters."""

    targets: tuple[str, ...]
    KIND: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if not self.targets or not all(isinstance(t, str) for t in self.targets):
            raise BadFaultData(f"{self.KIND}: targets must be service names, got {self.targets}")

    @property
    def kind(self) -> str:
        """The fault's kind name."""
        return self.KIND

    @property
    def fault_id(self) -> str:
        """The tag of this fault's rules: the kind and a digest of the description."""
        return fault_id(self.kind, json.dumps(self.describe(), sort_keys=True))

    def params(self) -> dict[str, Any]:
        """The kind's parameters (besides the targets) for the description."""
        return {}

    def describe(self) -> Mapping[str, Any]:
        """`targets` and the parameters: enough to rebuild the fault with its kind."""
        return {"targets": list(self.targets), **self.params()}

    def remove_rules(self, cluster: FaultTarget) -> None:
        """Delete the fault's rules from every service of the project."""
        remove_everywhere(cluster, self.fault_id)

    def no_rules_left(self, cluster: FaultTarget) -> Check:
        """Holds when no service carries a rule tagged with the fault's id."""
        left = leftovers_everywhere(cluster, self.fault_id)
        if left:
            return Check(False, f"rules of {self.fault_id} left: {left}")
        return Check(True, f"no rule tagged {self.fault_id} on any service")
