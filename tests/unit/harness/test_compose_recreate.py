"""The hunt's recreation of the brokers replaces every broker container, its
configuration changed or not: a broker a buggy run left alive but unregistered must not
carry its damage into the next run."""

from __future__ import annotations

from harness.compose import BROKER_SERVICES, brokers_up_command


def test_the_brokers_are_recreated_even_with_an_unchanged_configuration() -> None:
    command = brokers_up_command(["docker", "compose", "-p", "testbed-hunt"])
    assert command[:5] == ["docker", "compose", "-p", "testbed-hunt", "up"]
    assert "--force-recreate" in command
    assert {"--wait", "--no-deps", "--detach"} <= set(command)
    assert command[-len(BROKER_SERVICES) :] == list(BROKER_SERVICES)
    assert not {"zk1", "zk2", "zk3"} & set(command)
