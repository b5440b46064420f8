"""`admin.topic_names`: Kafka's legal topic names and its '.'/'_' collision rule."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from admin import (
    MAX_TOPIC_NAME_LENGTH,
    InvalidTopicError,
    colliding_candidates,
    colliding_topics,
    has_collision,
    refused_topics,
    validate_topic_name,
)

# --- legal names ---------------------------------------------------------------------------

LEGAL_CHARS = string.ascii_letters + string.digits + "._-"


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("a", id="one-letter"),
        pytest.param("orders.v2_EU-west-1", id="every-legal-kind"),
        pytest.param("__consumer_offsets", id="internal-topic"),
        pytest.param("...", id="three-dots"),
        pytest.param(".hidden", id="leading-dot"),
        pytest.param("-", id="dash"),
        pytest.param("x" * MAX_TOPIC_NAME_LENGTH, id="249-chars"),
    ],
)
def test_legal_topic_names(name: str) -> None:
    validate_topic_name(name)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param("", "Topic name is illegal, it can't be empty", id="empty"),
        pytest.param(".", 'Topic name cannot be "." or ".."', id="dot"),
        pytest.param("..", 'Topic name cannot be "." or ".."', id="dot-dot"),
        pytest.param(
            "x" * 250,
            "Topic name is illegal, it can't be longer than 249 characters, topic name: "
            + "x" * 250,
            id="250-chars",
        ),
        pytest.param(
            "a b",
            'Topic name "a b" is illegal, it contains a character other than ASCII '
            "alphanumerics, '.', '_' and '-'",
            id="space",
        ),
        pytest.param(
            "a/b",
            'Topic name "a/b" is illegal, it contains a character other than ASCII '
            "alphanumerics, '.', '_' and '-'",
            id="slash",
        ),
        pytest.param(
            "caf\u00e9",
            'Topic name "caf\u00e9" is illegal, it contains a character other than ASCII '
            "alphanumerics, '.', '_' and '-'",
            id="non-ascii-letter",
        ),
        pytest.param(
            "topic\n",
            'Topic name "topic\n" is illegal, it contains a character other than ASCII '
            "alphanumerics, '.', '_' and '-'",
            id="trailing-newline",
        ),
        pytest.param(
            "\U0001f600" * 125,
            "Topic name is illegal, it can't be longer than 249 characters, topic name: "
            + "\U0001f600" * 125,
            id="length-in-utf16-units-as-java",
        ),
    ],
)
def test_illegal_topic_names(name: str, message: str) -> None:
    with pytest.raises(InvalidTopicError) as caught:
        validate_topic_name(name)
    assert str(caught.value) == message


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=LEGAL_CHARS, min_size=1, max_size=MAX_TOPIC_NAME_LENGTH))
def test_every_short_name_of_legal_chars_is_legal(name: str) -> None:
    if name in (".", ".."):
        with pytest.raises(InvalidTopicError):
            validate_topic_name(name)
    else:
        validate_topic_name(name)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=40).filter(lambda n: any(c not in LEGAL_CHARS for c in n)))
def test_any_other_char_is_illegal(name: str) -> None:
    with pytest.raises(InvalidTopicError, match="is illegal, it contains a character"):
        validate_topic_name(name)


# --- collisions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "collide"),
    [
        ("a.b", "a_b", True),
        ("a_b", "a.b", True),
        ("a.b", "a.b", True),
        ("a..b", "a__b", True),
        ("a.b_c", "a_b.c", True),
        ("a.b", "a-b", False),
        ("ab", "a_b", False),
        ("A.b", "a_b", False),
    ],
)
def test_names_differing_only_in_dot_and_underscore_collide(
    first: str, second: str, collide: bool
) -> None:
    assert has_collision(first, second) is collide


def test_colliding_topics_leave_out_the_name_itself() -> None:
    existing = ["a_b", "a.b", "ab", "a-b", "x.y"]
    assert colliding_topics("a.b", existing) == ["a_b"]
    assert colliding_topics("new", existing) == []


def test_colliding_candidates_are_found_among_themselves_and_against_existing() -> None:
    candidates = {"a.b", "x_y", "plain", "m.n"}
    assert colliding_candidates(candidates, {"a_b", "other"}) == {"a.b"}
    assert colliding_candidates({"a.b", "a_b", "c"}, set()) == {"a.b", "a_b"}
    assert colliding_candidates(candidates, set()) == set()


def test_refused_topics_keep_the_first_created_of_a_colliding_group() -> None:
    """Candidates in creation order: the first of `a_b`/`a.b` wins, a candidate colliding
    with an accepted topic is refused, and a refused one blocks nobody."""
    refused = refused_topics(["a_b", "a.b", "k.l", "x.y", "x_y"], {"k_l"})
    assert refused == {
        "a.b": "Topic 'a.b' collides with existing topics: a_b",
        "k.l": "Topic 'k.l' collides with existing topics: k_l",
        "x_y": "Topic 'x_y' collides with existing topics: x.y",
    }
    assert refused_topics(["a.b"], set()) == {}
