"""The handle's own ZooKeeper session and the time an admin action's ZooKeeper work may
take: a session on a server frozen as the action starts notices (two thirds of its
timeout), tries another server (a third each, kazoo's connect timeout over three hosts)
and answers before the action, or the step resolving its role, gives up, so a frozen
server fails neither."""

from __future__ import annotations

from chaos.cluster.handle import ZK_SESSION_S
from chaos.cluster.zk_off_loop import ACTION_READ_S, STEP_READ_S

#: The ensemble's servers: kazoo divides its timeout among them to connect.
SERVERS = 3


def test_a_frozen_server_is_left_before_an_action_or_a_step_gives_up() -> None:
    notice = ZK_SESSION_S * 2 / 3
    one_more_try = ZK_SESSION_S / SERVERS
    assert notice + one_more_try < ACTION_READ_S
    assert notice + one_more_try < STEP_READ_S


def test_the_session_is_one_the_ensemble_grants() -> None:
    # the servers' bounds (docker/zookeeper/zk-entrypoint.sh): 1 s to 60 s
    assert 1.0 <= ZK_SESSION_S <= 60.0
    assert STEP_READ_S <= ACTION_READ_S
