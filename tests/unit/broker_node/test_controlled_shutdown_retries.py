"""How often a stopping broker asks the controller, and how long it waits, as Kafka 2.8's
`KafkaServer.controlledShutdown` does: `controlled.shutdown.max.retries` attempts in all,
the backoff after every failed one, the last included."""

from __future__ import annotations

from broker_node.controlled_shutdown import DONE, ask_until_done


def run(max_retries: int, outcomes: list[str]) -> tuple[bool, list[str], list[float]]:
    answers = iter(outcomes)
    recorded: list[str] = []
    waits: list[float] = []
    done = ask_until_done(
        max_retries,
        5.0,
        lambda: next(answers),
        lambda attempt, outcome: recorded.append(f"{attempt}:{outcome}"),
        waits.append,
    )
    return done, recorded, waits


def test_three_retries_are_three_attempts_each_followed_by_the_backoff() -> None:
    assert run(3, ["NOT_CONTROLLER"] * 5) == (
        False,
        ["1:NOT_CONTROLLER", "2:NOT_CONTROLLER", "3:NOT_CONTROLLER"],
        [5.0, 5.0, 5.0],
    )


def test_the_first_attempt_with_nothing_left_ends_it_without_waiting() -> None:
    assert run(3, ["2 partitions still led", DONE]) == (
        True,
        ["1:2 partitions still led", f"2:{DONE}"],
        [5.0],
    )


def test_no_retries_means_no_attempt() -> None:
    assert run(0, [DONE]) == (False, [], [])
