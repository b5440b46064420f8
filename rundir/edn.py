"""Writing EDN, the data notation Jepsen's histories are stored in: enough of it for a
history (`nil`, booleans, integers, floats, strings, keywords, vectors, maps). Pure; any
thread.

Python values map as: None -> `nil`, bool -> `true`/`false`, int -> an integer, float ->
a float, str -> a string, `Keyword` -> `:name`, list and tuple -> a vector `[...]`, dict
-> a map `{...}` (in the dict's order).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import NewType

__all__ = ["Keyword", "dumps", "keyword"]

#: An EDN keyword's name (`:invoke` is `keyword("invoke")`).
Keyword = NewType("Keyword", str)

#: What a keyword's name may be: the symbol characters EDN allows, starting with a letter
#: or one of `*+!-_?<>=` not followed by a digit.
_KEYWORD = re.compile(r"[A-Za-z*+!_?<>=-][A-Za-z0-9*+!_?<>=.#:/-]*")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPED = re.compile(r'["\\\n\r\t]')


class _Keyword(str):
    """A keyword, told apart from a string by its type."""

    __slots__ = ()


def keyword(name: str) -> Keyword:
    """The keyword `:name`; `ValueError` when `name` is not a valid keyword name."""
    if not _KEYWORD.fullmatch(name) or re.match(r"[-+][0-9]", name):
        raise ValueError(f"not an EDN keyword name: {name!r}")
    return Keyword(_Keyword(name))


def dumps(value: object) -> str:
    """`value` as one line of EDN; `TypeError` for a value of another type, `ValueError`
    for a float that EDN cannot spell (NaN, infinity)."""
    if value is None:
        return "nil"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, _Keyword):
        return ":" + value
    if isinstance(value, str):
        return '"' + _ESCAPED.sub(lambda m: _ESCAPES[m.group()], value) + '"'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"EDN has no float {value}")
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + " ".join(dumps(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{dumps(k)} {dumps(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no EDN form for {type(value).__name__}: {value!r}")
