"""A compose project that does not come up says why: what compose said but its progress
lines, then the containers most likely at fault first, with their logs; the others in one
line each."""

from __future__ import annotations

from harness.compose import ContainerState, start_failure_text

COMMAND = "`docker compose up --wait` exited with 1"


def _healthy(name: str) -> ContainerState:
    return ContainerState(name, "running", "healthy", None, f"{name} serving\n")


def test_a_container_that_exited_comes_first_with_its_exit_code_and_log() -> None:
    exited = ContainerState("p-broker2-1", "exited", "unhealthy", 3, "no-such-start-up\n")
    text = start_failure_text(
        COMMAND,
        "Container p-broker2-1  Started\ncontainer p-broker2-1 exited (3)\n",
        [_healthy("p-zk1-1"), exited, _healthy("p-broker1-1")],
    )
    lines = text.splitlines()
    assert lines[:2] == [COMMAND, "container p-broker2-1 exited (3)"]  # no progress lines
    assert lines[2:4] == [
        "--- p-broker2-1: exited (exit code 3), health unhealthy",
        "no-such-start-up",
    ]
    assert "--- p-broker1-1: running, health healthy" in lines
    assert "p-broker1-1 serving" not in text  # the healthy ones' logs are left out


def test_when_nothing_stopped_the_containers_still_starting_show_their_logs() -> None:
    starting = ContainerState("p-broker1-1", "running", "starting", None, "waiting for zk\n")
    never = ContainerState("p-broker2-1", "created", "-", None, "")
    text = start_failure_text(COMMAND, "", [never, starting, _healthy("p-zk1-1")])
    assert text.splitlines()[1:3] == ["--- p-broker1-1: running, health starting", "waiting for zk"]
    assert "--- p-broker2-1: created, health -" in text


def test_an_empty_log_is_said_to_be_empty() -> None:
    silent = ContainerState("p-broker3-1", "exited", "-", 3, "")
    assert "(its log is empty)" in start_failure_text(COMMAND, "", [silent])
