"""The validation rules both request checks share (`broker_node.request_validation` for
the control requests, `broker_node.client_request_validation` for the client API): the
`Verdict` a check returns, Kafka's topic-name rule, the bound on the partitions of one
request with no partition named twice, the bound on timeouts, and a topic-partition
entry's own checks. Pure; any thread (gRPC workers call them).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from domain import TopicPartition
from rpc import limits
from rpc.errors import Errors

#: Kafka's `Topic.MAX_NAME_LENGTH` and legal characters (`admin.topic_names` holds the
#: admin-side rule with Kafka's messages; this is the broker's O(1) check).
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")


@dataclass(frozen=True, slots=True)
class Verdict:
    """What validation found: `error` refuses the whole request; `invalid` lists entries
    to answer with their error and skip; `left_out` names live brokers (UpdateMetadata) or
    live leaders (LeaderAndIsr) whose endpoints are unusable, to drop from the request
    before it is applied. `reason` says what was wrong first, for events."""

    error: Errors = Errors.NONE
    reason: str = ""
    invalid: Mapping[TopicPartition, Errors] = field(default_factory=dict)
    left_out: frozenset[int] = frozenset()

    @property
    def ok(self) -> bool:
        """Nothing wrong at all."""
        return self.error is Errors.NONE and not self.invalid and not self.left_out


VALID = Verdict()


def refuse(reason: str, error: Errors = Errors.INVALID_REQUEST) -> Verdict:
    """A verdict refusing the whole request with `error` for `reason`."""
    return Verdict(error, reason)


@functools.lru_cache(maxsize=65_536)
def legal_topic(name: str) -> bool:
    """Kafka's topic-name rule: 1..249 of [a-zA-Z0-9._-], and not "." or ".." (cached:
    a large request names the same few topics thousands of times)."""
    return _LEGAL_TOPIC.fullmatch(name) is not None and name not in (".", "..")


def list_problem(keys: list[tuple[str, int]]) -> str | None:
    """Over the bound, or a (topic, partition) listed twice."""
    if len(keys) > limits.MAX_PARTITIONS_PER_REQUEST:
        return f"{len(keys)} partitions, over {limits.MAX_PARTITIONS_PER_REQUEST}"
    if len(set(keys)) == len(keys):
        return None
    seen: set[tuple[str, int]] = set()
    for key in keys:
        if key in seen:
            return f"{key[0]}-{key[1]} listed twice"
        seen.add(key)
    return None  # not reached


def invalid_entries(
    checked: Iterable[tuple[TopicPartition, Errors, str]],
) -> Verdict:
    """The verdict of per-entry checks: the entries with an error, the first one's reason."""
    invalid: dict[TopicPartition, Errors] = {}
    reason = ""
    for tp, error, why in checked:
        if error is not Errors.NONE:
            invalid[tp] = error
            reason = reason or f"{tp}: {why}"
    return Verdict(Errors.NONE, reason, invalid) if invalid else VALID


def timeout_problem(name: str, value: int) -> str | None:
    """Why a timeout in ms is out of range, or None."""
    if not 0 <= value <= limits.MAX_TIMEOUT_MS:
        return f"{name} {value} out of [0, {limits.MAX_TIMEOUT_MS}]"
    return None


def topic_partition_entry(tp: TopicPartition, negative: Errors) -> tuple[Errors, str]:
    """An entry's error and reason: an illegal topic name, or a negative partition
    (answered `negative`)."""
    if not legal_topic(tp.topic):
        return Errors.INVALID_TOPIC_EXCEPTION, "illegal topic name"
    if tp.partition < 0:
        return negative, "negative partition"
    return Errors.NONE, ""
