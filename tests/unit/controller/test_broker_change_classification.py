"""`classify_brokers`: the controller's reading of a `/brokers/ids` change, and bug switch
`kip-380`, under which a fast bounce (same id, new registration) goes unseen."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from controller.broker_changes import classify_brokers

EPOCHS = st.dictionaries(st.integers(0, 6), st.integers(0, 5), max_size=6)


def test_new_dead_and_bounced_brokers() -> None:
    delta = classify_brokers({1: 10, 2: 25, 4: 40}, {1: 10, 2: 20, 3: 30})
    assert (delta.new, delta.dead, delta.bounced) == ([4], [3], [2])


def test_kip_380_misses_a_fast_bounce() -> None:
    delta = classify_brokers({1: 10, 2: 25, 4: 40}, {1: 10, 2: 20, 3: 30}, detect_bounces=False)
    assert (delta.new, delta.dead, delta.bounced) == ([4], [3], [])


@given(EPOCHS, EPOCHS)
def test_without_bounce_detection_only_bounces_are_missed(
    registered: dict[int, int], known: dict[int, int]
) -> None:
    fixed = classify_brokers(registered, known)
    buggy = classify_brokers(registered, known, detect_bounces=False)
    assert (buggy.new, buggy.dead) == (fixed.new, fixed.dead)
    assert buggy.bounced == []
    assert fixed.bounced == sorted(b for b in registered if b in known and registered[b] > known[b])
