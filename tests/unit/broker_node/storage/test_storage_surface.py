"""The public surface of `broker_node.storage` and its test double's faithfulness to it."""

from __future__ import annotations

import inspect

import broker_node.storage as storage
from broker_node.storage import PartitionLog
from broker_node.storage.testing import InMemoryPartitionLog


def test_the_package_exports_exactly_its_public_api() -> None:
    assert sorted(storage.__all__) == [
        "CorruptLogError",
        "EpochEntry",
        "LogError",
        "OffsetOutOfRangeError",
        "PartitionLog",
        "Record",
        "UNDEFINED_EPOCH",
        "UNDEFINED_OFFSET",
    ]
    for name in storage.__all__:
        assert getattr(storage, name) is not None


def test_the_error_tree() -> None:
    assert issubclass(storage.OffsetOutOfRangeError, storage.LogError)
    assert issubclass(storage.CorruptLogError, storage.LogError)
    assert storage.UNDEFINED_EPOCH == storage.UNDEFINED_OFFSET == -1


def public_members(cls: type) -> dict[str, object]:
    return {
        name: member
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and name != "directory"
    }


def test_the_in_memory_double_has_every_method_with_the_same_parameters() -> None:
    real = public_members(PartitionLog)
    double = public_members(InMemoryPartitionLog)
    assert set(real) <= set(double)
    for name, member in real.items():
        if callable(member):
            assert list(inspect.signature(member).parameters) == list(
                inspect.signature(double[name]).parameters  # type: ignore[arg-type]
            ), name
