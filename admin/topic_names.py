"""Kafka's topic-name rules (`org.apache.kafka.common.internals.Topic`): which names are
legal, and which names collide because metric names cannot tell '.' from '_'.

Pure: no I/O, logging or metrics. Any thread.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from admin.errors import InvalidTopicError, TopicExistsError

__all__ = [
    "MAX_TOPIC_NAME_LENGTH",
    "colliding_candidates",
    "colliding_topics",
    "collision_message",
    "has_collision",
    "refused_topics",
    "validate_topic_creation",
    "validate_topic_name",
]

#: Kafka's `Topic.MAX_NAME_LENGTH`: leaves room in a 255-byte file name for the partition.
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]+")


def validate_topic_name(name: str) -> None:
    """Raise `InvalidTopicError` unless `name` is a legal Kafka topic name.

    Legal: not empty, not "." or "..", at most 249 characters, and only ASCII letters,
    digits, '.', '_' and '-'.
    """
    if not name:
        raise InvalidTopicError("Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise InvalidTopicError('Topic name cannot be "." or ".."')
    # Java counts UTF-16 code units; that matters only for names that are illegal anyway,
    # but it keeps the message the one Kafka gives.
    if len(name.encode("utf-16-le")) // 2 > MAX_TOPIC_NAME_LENGTH:
        raise InvalidTopicError(
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} "
            f"characters, topic name: {name}"
        )
    if _LEGAL_TOPIC_NAME.fullmatch(name) is None:
        raise InvalidTopicError(
            f'Topic name "{name}" is illegal, it contains a character other than '
            "ASCII alphanumerics, '.', '_' and '-'"
        )


def has_collision(first: str, second: str) -> bool:
    """Kafka's `Topic.hasCollision`: the two names are the same once every '.' is read as
    '_' (their metric names would clash)."""
    return first.replace(".", "_") == second.replace(".", "_")


def colliding_topics(name: str, existing: Iterable[str]) -> list[str]:
    """The `existing` topics, other than `name` itself, that collide with `name`, sorted."""
    return sorted(t for t in set(existing) if t != name and has_collision(name, t))


def collision_message(name: str, colliding: Iterable[str]) -> str:
    """Kafka's words for a topic refused because of colliding names."""
    return f"Topic '{name}' collides with existing topics: {', '.join(colliding)}"


def validate_topic_creation(name: str, existing: Iterable[str]) -> None:
    """The checks Kafka's `AdminZkClient.validateTopicCreate` makes on a new topic's name
    against the `existing` topics, in its order: a legal name (`InvalidTopicError`), not
    an existing topic (`TopicExistsError`), and no collision with one (`InvalidTopicError`
    with Kafka's message)."""
    validate_topic_name(name)
    present = set(existing)
    if name in present:
        raise TopicExistsError(f"Topic '{name}' already exists.")
    colliding = colliding_topics(name, present)
    if colliding:
        raise InvalidTopicError(collision_message(name, colliding))


def refused_topics(candidates: Sequence[str], accepted: Iterable[str]) -> dict[str, str]:
    """Which `candidates` the collision rule refuses, each with Kafka's message: taken in
    the order given (creation order), a candidate is refused when its name collides with an
    `accepted` topic's or with an earlier candidate that was not refused itself."""
    kept = set(accepted)
    refused: dict[str, str] = {}
    for name in candidates:
        colliding = colliding_topics(name, kept)
        if colliding:
            refused[name] = collision_message(name, colliding)
        else:
            kept.add(name)
    return refused


def colliding_candidates(candidates: Iterable[str], existing: Iterable[str]) -> set[str]:
    """The `candidates` whose names collide with another candidate's or an `existing`
    topic's; linear in the number of names, so that a controller can ask it of every
    topic at failover."""
    names = set(candidates)
    groups: dict[str, set[str]] = {}
    for name in names | set(existing):
        groups.setdefault(name.replace(".", "_"), set()).add(name)
    return {name for name in names if len(groups[name.replace(".", "_")]) > 1}
