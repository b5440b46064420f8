"""The event types: one per kind, registered once, written in their declared order,
decoded back to equal values, documented in docs/events.md as the code generates it, and
every kind an `emit` anywhere in the code names is one of them."""

from __future__ import annotations

import ast
import dataclasses
import json
import types
import typing
from pathlib import Path

import pytest

from eventlog import (
    ABSENT,
    EVENT_TYPES,
    Event,
    EventDecodeError,
    EventKind,
    IsrChanged,
    NodeStopped,
    decode,
)
from eventlog.doc import DOC_PATH, rewritten
from eventlog.log import encode_event
from eventlog.testing import RecordingEventLog

ROOT = Path(__file__).resolve().parents[3]
#: Where events are emitted: the product and the tests.
EMITTING = (
    "broker_node",
    "controller",
    "chaos",
    "pipeline",
    "client",
    "testbed",
    "harness",
    "bench",
    "tests",
)

_SAMPLES: dict[object, object] = {
    int: 7,
    str: "x",
    bool: True,
    float: 1.5,
    list[int]: [1, 2],
    list[int | None]: [3, None],
    list[bool]: [True, False],
    list[str]: ["a"],
    list[list[int]]: [[0, 1]],
    list[list[int | str]]: [[3, "v"]],
    list[dict[str, object]]: [{"topic": "t"}],
    dict[str, int]: {"NONE": 1},
    dict[str, str]: {"a": "b"},
}


def _sample(event_type: type[Event], with_absent: bool) -> Event:
    """An event of `event_type` with a value of its type in each field (`ABSENT` ones left
    out unless `with_absent`)."""
    hints = typing.get_type_hints(event_type)
    values: dict[str, object] = {}
    for field in dataclasses.fields(event_type):
        hint = hints[field.name]
        union = typing.get_origin(hint) in (typing.Union, types.UnionType)
        options = typing.get_args(hint) if union else (hint,)
        if field.default is ABSENT and not with_absent:
            continue
        values[field.name] = next(_SAMPLES[t] for t in options if t in _SAMPLES)
    return event_type(**values)


def test_every_kind_has_one_type() -> None:
    assert set(EVENT_TYPES) == {str(k) for k in EventKind}
    for kind, event_type in EVENT_TYPES.items():
        assert event_type.kind == kind
        assert dataclasses.is_dataclass(event_type)
        assert event_type.__doc__, kind


@pytest.mark.parametrize("kind", sorted(EVENT_TYPES))
def test_a_line_is_the_envelope_then_the_fields_in_declared_order(kind: str) -> None:
    event_type = EVENT_TYPES[kind]
    for with_absent in (True, False):
        event = _sample(event_type, with_absent)
        record = RecordingEventLog("b1").emit(event)
        written = [
            f.name for f in dataclasses.fields(event) if getattr(event, f.name) is not ABSENT
        ]
        assert list(record) == ["v", "ts", "node", "kind", "seq", "mono_ms", *written]
        assert json.loads(encode_event(record)) == record
        assert decode(record) == event


def test_fields_only_some_writers_write_are_left_out_not_null() -> None:
    leader = IsrChanged(
        topic="t", partition=0, reason="expand", leader=1, leader_epoch=2,
        old_isr=[1], isr=[1, 2], zk_version=3, high_watermark=9,
    )  # fmt: skip
    record = RecordingEventLog("b1").emit(leader)
    assert "by" not in record
    assert "controller_epoch" not in record
    assert record["old_isr"] == [1]


def test_an_unknown_or_missing_field_fails() -> None:
    with pytest.raises(TypeError, match="unexpected keyword"):
        NodeStopped(broker_id=1, pid=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="missing"):
        NodeStopped()  # type: ignore[call-arg]
    with pytest.raises(EventDecodeError):
        decode({"kind": "node_stopped"})
    with pytest.raises(EventDecodeError):
        decode({"kind": "no_such_kind"})


def test_events_are_frozen() -> None:
    event = NodeStopped(broker_id=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.broker_id = 2  # type: ignore[misc]


def test_docs_events_md_is_what_the_types_generate() -> None:
    """Run `python -m eventlog.doc` after changing an event type."""
    text = DOC_PATH.read_text(encoding="utf-8")
    assert rewritten(text) == text


def _emitted_kinds() -> list[tuple[str, str]]:
    """(where, kind) of every `.emit(...)` in the code whose kind can be read from its
    source: a type built in place, an `EventKind` member or a kind's name as a string."""
    names = {t.__name__: kind for kind, t in EVENT_TYPES.items()}
    found: list[tuple[str, str]] = []
    for package in EMITTING:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                    continue
                if node.func.attr != "emit":
                    continue
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                for arg in node.args:
                    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name):
                        if arg.func.id[:1].isupper():  # a type built in place
                            found.append((where, names.get(arg.func.id, arg.func.id)))
                    elif isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name):
                        if arg.value.id in ("EventKind", "K"):
                            found.append((where, arg.attr.lower()))
                    elif (
                        isinstance(arg, ast.Constant)
                        and isinstance(arg.value, str)
                        and not arg.value.startswith("broker")  # a node's name
                    ):
                        found.append((where, arg.value))
    return found


def test_every_kind_emitted_anywhere_has_a_type() -> None:
    emitted = _emitted_kinds()
    assert len(emitted) > 100
    unknown = [(where, kind) for where, kind in emitted if kind not in EVENT_TYPES]
    assert unknown == []
