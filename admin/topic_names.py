"""Kafka's topic-name rules (`org.apache.kafka.common.internals.Topic`): which names are
legal, and which names collide because metric names cannot tell '.' from '_'.

Pure: no I/O, logging or metrics. Any thread.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from admin.errors import InvalidTopicError
from zkdata.errors import TopicExistsError

__all__ = [
    "MAX_TOPIC_NAME_LENGTH",
    "colliding_topics",
    "collision_message",
    "has_collision",
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
