"""A helper's answer travels as plain tuples and comes back as the same value objects: the
states with their zkVersions and unknown fields, and the malformed znodes with their paths."""

from __future__ import annotations

from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from zkdata import paths
from zkdata.errors import ZnodeFormatError
from zkdata.state_readers import _decode_answer, _encode_answer


def test_an_answer_round_trips() -> None:
    found = {
        TopicPartition("a", 0): (
            LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1, 2), 7), 3),
            (("leader_recovery_state", "0"),),
        ),
        TopicPartition("b", 12): (LeaderIsrAndControllerEpoch(LeaderAndIsr(-1, 0, (), 0), 1), ()),
    }
    malformed = {
        TopicPartition("c", 2): ZnodeFormatError("not JSON", paths.partition_state("c", 2))
    }

    answer = _decode_answer(_encode_answer(found, malformed))

    assert answer.found == found
    [(tp, error)] = answer.malformed.items()
    assert tp == TopicPartition("c", 2)
    assert (error.reason, error.path) == ("not JSON", paths.partition_state("c", 2))


def test_an_answer_of_the_wrong_shape_does_not_decode() -> None:
    shapes: list[object] = [[], ("x",), ([("t", 0, 1)], [])]
    for garbage in shapes:
        try:
            _decode_answer(garbage)
        except (TypeError, ValueError):
            continue
        raise AssertionError(f"{garbage!r} decoded")
