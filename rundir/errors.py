"""The root of the run-directory contract's errors, `RunDirError`; each kind is declared
beside what raises it (the tree is drawn in the package docstring). Any thread."""

from __future__ import annotations

__all__ = ["RunDirError"]


class RunDirError(ValueError):
    """A run directory that the contract refuses: missing, of another version, or holding
    a line that breaks its schema. Raised as itself for a missing directory or a bad
    event or snapshot line found while reading one."""
