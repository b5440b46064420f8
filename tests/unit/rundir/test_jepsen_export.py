"""The EDN writer and the history in Jepsen's form: exact strings for each value kind, and
every op of a history read back by a small EDN reader into the structure Jepsen's Kafka
workload uses (`[:send k v]`, `[:send k [offset v]]`, `[:poll {k [[offset v] ...]}]`)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from rundir.edn import dumps, keyword
from rundir.history import HistoryOp, OpF, OpType
from rundir.jepsen_history import jepsen_lines

_TOKEN = re.compile(
    r'\s*(?:(?P<open>[\[{])|(?P<close>[\]}])|"(?P<str>(?:\\.|[^"\\])*)"'
    r"|:(?P<kw>[^\s\[\]{},]+)|(?P<atom>[^\s\[\]{},]+))\s*,?"
)


class Kw(str):
    """A keyword read back."""


def read_edn(text: str) -> Any:
    """The one value of `text` (the subset `rundir.edn` writes)."""
    tokens = list(_TOKEN.finditer(text))
    assert "".join(t.group() for t in tokens) == text, "unparsed text"
    value, end = _value(tokens, 0)
    assert end == len(tokens)
    return value


def _value(tokens: list[re.Match[str]], i: int) -> tuple[Any, int]:
    t = tokens[i]
    if t.group("open"):
        items = []
        i += 1
        while not tokens[i].group("close"):
            item, i = _value(tokens, i)
            items.append(item)
        if t.group("open") == "[":
            return items, i + 1
        return dict(zip(items[::2], items[1::2], strict=True)), i + 1
    if t.group("str") is not None:
        unescaped = re.sub(
            r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m[1], m[1]), t["str"]
        )
        return unescaped, i + 1
    if t.group("kw"):
        return Kw(t["kw"]), i + 1
    atom = t["atom"]
    if atom in _ATOMS:
        return _ATOMS[atom], i + 1
    return (float(atom) if "." in atom else int(atom)), i + 1


_ATOMS: dict[str, Any] = {"nil": None, "true": True, "false": False}


def test_each_value_kind_has_its_exact_form() -> None:
    assert dumps(None) == "nil"
    assert dumps([True, False, 3, -2, 1.5]) == "[true false 3 -2 1.5]"
    assert dumps({keyword("f"): keyword("send")}) == "{:f :send}"
    assert dumps('a "b"\\\n') == r'"a \"b\"\\\n"'
    assert dumps((1, [2, {3: "x"}])) == '[1 [2 {3 "x"}]]'


def test_what_edn_cannot_spell_is_refused() -> None:
    with pytest.raises(ValueError, match="not an EDN keyword"):
        keyword("1x")
    with pytest.raises(ValueError, match=r"NaN|nan"):
        dumps(float("nan"))
    with pytest.raises(TypeError, match="set"):
        dumps({1, 2})


def _op(kind: OpType, f: OpF, process: str, ns: int, op_id: int, **fields: Any) -> HistoryOp:
    return HistoryOp(
        kind,
        f,
        process,
        ns,
        0,
        fields.pop("topic", "t"),
        0,
        fields.pop("offset", None),
        fields.pop("value", None),
        fields.pop("error", None),
        op_id,
        **fields,
    )


HISTORY = [
    _op("invoke", "send", "producer-0", 1_000, 0, value="v0", acks=-1),
    _op("ok", "send", "producer-0", 3_000, 0, value="v0", offset=7, acks=-1, attempts=1),
    _op("invoke", "send", "producer-0", 4_000, 1, value="v1", acks=-1),
    _op("fail", "send", "producer-0", 5_000, 1, value="v1", error="NOT_LEADER_OR_FOLLOWER"),
    _op("invoke", "poll", "consumer", 6_000, 0, offset=7),
    _op("ok", "poll", "consumer", 9_000, 0, offset=8, records=((7, "v0"),), attempts=1),
    _op("invoke", "send", "producer-0", 9_500, 2, value="v2", acks=-1),
    _op("info", "send", "producer-0", 9_900, 2, value="v2", error="REQUEST_TIMED_OUT"),
]


def test_a_history_reads_back_as_jepsens_kafka_ops() -> None:
    ops = [read_edn(line) for line in jepsen_lines(HISTORY)]
    assert [op[Kw("index")] for op in ops] == list(range(len(HISTORY)))
    assert [op[Kw("time")] for op in ops] == [op.time_ns - 1_000 for op in HISTORY]
    assert [op[Kw("type")] for op in ops] == [op.type for op in HISTORY]
    assert {op[Kw("process-name")]: op[Kw("process")] for op in ops} == {
        "consumer": 0,
        "producer-0": 1,
    }
    values = [op[Kw("value")] for op in ops]
    assert values[0] == [[Kw("send"), 0, "v0"]]
    assert values[1] == [[Kw("send"), 0, [7, "v0"]]]
    assert values[3] == [[Kw("send"), 0, "v1"]]
    assert ops[3][Kw("error")] == "NOT_LEADER_OR_FOLLOWER"
    assert values[4] == [[Kw("poll")]]
    assert values[5] == [[Kw("poll"), {0: [[7, "v0"]]}]]
    assert values[7] == [[Kw("send"), 0, "v2"]]
    assert ops[7][Kw("type")] == "info"


def test_the_first_line_is_exact() -> None:
    first = next(jepsen_lines(HISTORY))
    assert first == (
        "{:index 0, :time 0, :type :invoke, :process 1, :f :send, "
        ':value [[:send 0 "v0"]], :process-name "producer-0"}'
    )


def test_two_topics_key_by_topic_and_partition() -> None:
    other = _op("invoke", "send", "producer-1", 2_000, 0, value="w", topic="u", acks=-1)
    lines = list(jepsen_lines([HISTORY[0], other]))
    assert '[[:send "t-0" "v0"]]' in lines[0]
    assert '[[:send "u-0" "w"]]' in lines[1]
