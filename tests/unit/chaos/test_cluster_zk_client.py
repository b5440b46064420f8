"""The cluster handle's ZooKeeper client gives a command up after its deadline instead of
retrying for ever (kazoo's default), so that a ZooKeeper without quorum cannot hold up
the runner's step loop."""

from __future__ import annotations

import time

import pytest
from kazoo.exceptions import ConnectionLoss
from kazoo.retry import RetryFailedError

from chaos.cluster import ZK_READ_DEADLINE_S, handle_zk_client


@pytest.mark.parametrize("deadline_s", [0.3, None])
def test_a_command_that_keeps_losing_its_connection_gives_up_at_the_deadline(
    deadline_s: float | None,
) -> None:
    if deadline_s is None:
        client, deadline_s = handle_zk_client("127.0.0.1:1", None), ZK_READ_DEADLINE_S
    else:
        client = handle_zk_client("127.0.0.1:1", None, deadline_s=deadline_s)
    attempts = []

    def lost() -> None:
        attempts.append(time.monotonic())
        raise ConnectionLoss()

    started = time.monotonic()
    with pytest.raises(RetryFailedError):
        client.retry(lost)
    assert len(attempts) > 1  # it was retried
    assert time.monotonic() - started < deadline_s + 1.5
