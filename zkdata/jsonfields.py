"""Strict field access for znode decoders.

Every helper raises `ZnodeFormatError` and nothing else, so a decoder built from them can
promise that malformed bytes never escape as another exception. Pure, any thread.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from zkdata.errors import ZnodeFormatError

#: Kafka stores ids, epochs and partition numbers as Java ints.
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
_LONG = re.compile(r"-?[0-9]{1,19}")
_PARTITION = re.compile(r"[0-9]{1,10}")


def encode(obj: object) -> bytes:
    """Compact JSON as Kafka writes it (no spaces), UTF-8."""
    return json.dumps(obj, separators=(",", ":")).encode("utf-8")


def parse_object(data: bytes | None) -> dict[str, Any]:
    """Parse bytes holding one JSON object."""
    if data is None:
        raise ZnodeFormatError("znode has no data")
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ZnodeFormatError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ZnodeFormatError(f"expected a JSON object, got {type(value).__name__}")
    return value


def get_int(obj: dict[str, Any], key: str, *, minimum: int | None = None) -> int:
    """A required integer field (booleans are not integers here)."""
    if key not in obj:
        raise ZnodeFormatError(f"missing field {key!r}")
    return as_int(obj[key], key, minimum=minimum)


def as_int(
    value: object, what: str, *, minimum: int | None = None, maximum: int = INT32_MAX
) -> int:
    """Check that `value` is an integer within [`minimum` (default int32 min), `maximum`]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ZnodeFormatError(f"{what} must be an integer, got {value!r}")
    low = INT32_MIN if minimum is None else minimum
    if not low <= value <= maximum:
        raise ZnodeFormatError(f"{what} must be between {low} and {maximum}, got {value}")
    return value


def get_str(obj: dict[str, Any], key: str) -> str:
    """A required string field."""
    if key not in obj:
        raise ZnodeFormatError(f"missing field {key!r}")
    value = obj[key]
    if not isinstance(value, str):
        raise ZnodeFormatError(f"{key} must be a string, got {value!r}")
    return value


def get_int_list(obj: dict[str, Any], key: str, *, minimum: int | None = None) -> tuple[int, ...]:
    """A required list of integers."""
    if key not in obj:
        raise ZnodeFormatError(f"missing field {key!r}")
    return as_int_list(obj[key], key, minimum=minimum)


def as_int_list(value: object, what: str, *, minimum: int | None = None) -> tuple[int, ...]:
    """Check that `value` is a list of integers."""
    if not isinstance(value, list):
        raise ZnodeFormatError(f"{what} must be a list, got {value!r}")
    return tuple(as_int(v, f"{what}[]", minimum=minimum) for v in value)


def get_list(obj: dict[str, Any], key: str) -> list[Any]:
    """A required JSON array."""
    if key not in obj:
        raise ZnodeFormatError(f"missing field {key!r}")
    value = obj[key]
    if not isinstance(value, list):
        raise ZnodeFormatError(f"{key} must be a list, got {value!r}")
    return value


def get_object(
    obj: dict[str, Any], key: str, *, default: dict[str, Any] | None = None
) -> dict[str, Any]:
    """An object field; `default` when absent (required if no default)."""
    if key not in obj:
        if default is not None:
            return default
        raise ZnodeFormatError(f"missing field {key!r}")
    value = obj[key]
    if not isinstance(value, dict):
        raise ZnodeFormatError(f"{key} must be an object, got {value!r}")
    return value


def as_object(value: object, what: str) -> dict[str, Any]:
    """Check that `value` is a JSON object."""
    if not isinstance(value, dict):
        raise ZnodeFormatError(f"{what} must be an object, got {value!r}")
    return value


def check_version(obj: dict[str, Any], supported: tuple[int, ...]) -> int:
    """The `version` field, which must be one of `supported`."""
    version = get_int(obj, "version")
    if version not in supported:
        raise ZnodeFormatError(f"unsupported version {version} (supported: {list(supported)})")
    return version


def timestamp_ms(obj: dict[str, Any], key: str = "timestamp") -> int:
    """Kafka writes timestamps as a string of milliseconds (a Java long); tolerate an
    integer; default 0."""
    value = obj.get(key, "0")
    if isinstance(value, str):
        text = value.strip()
        if not _LONG.fullmatch(text) or not -(2**63) <= int(text) < 2**63:
            raise ZnodeFormatError(f"{key} must be a string of milliseconds, got {value!r}")
        return int(text)
    return as_int(value, key, minimum=-(2**63), maximum=2**63 - 1)


def partition_number(key: str) -> int:
    """A partition number written as a JSON object key ("0", "1", ...)."""
    if not _PARTITION.fullmatch(key) or int(key) > INT32_MAX:
        raise ZnodeFormatError(f"partition key must be a non-negative integer, got {key!r}")
    return int(key)


def unknown_fields(obj: Mapping[str, Any], known: Collection[str]) -> tuple[tuple[str, str], ...]:
    """The fields of `obj` a decoder does not use, as (name, compact JSON text) pairs in
    name order: hashable, so a frozen value object can carry them to the next write."""
    return tuple(
        (k, json.dumps(obj[k], separators=(",", ":"))) for k in sorted(obj) if k not in known
    )


def with_unknown_fields(
    body: Mapping[str, object], unknown: tuple[tuple[str, str], ...]
) -> dict[str, object]:
    """`body` followed by the fields `unknown_fields` kept; a field `body` writes itself
    wins over a kept one of the same name."""
    out = dict(body)
    for key, text in unknown:
        out.setdefault(key, json.loads(text))
    return out
