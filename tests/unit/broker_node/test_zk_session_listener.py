"""`SessionListener`: kazoo's session states become the controller's hooks — suspension
stops it acting, a connection resumes it, an expiry and the next session re-elect."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState

from broker_node.zk_session import SessionListener
from eventlog import EventKind
from eventlog.testing import RecordingEventLog


def listener(calls: list[str]) -> tuple[SessionListener, RecordingEventLog]:
    events = RecordingEventLog("broker1")
    client = cast(KazooClient, SimpleNamespace(client_id=(0x1234, b"")))

    def hook(name: str) -> Any:
        return lambda: calls.append(name)

    return (
        SessionListener(
            client,
            events,
            on_expired=hook("expired"),
            on_new_session=hook("new_session"),
            on_suspended=hook("suspended"),
            on_connected=hook("connected"),
        ),
        events,
    )


def test_a_suspension_and_the_same_session_back() -> None:
    calls: list[str] = []
    on_state, events = listener(calls)
    for state in (KazooState.CONNECTED, KazooState.SUSPENDED, KazooState.CONNECTED):
        on_state(state)
    assert calls == ["connected", "suspended", "connected"]
    assert [e["state"] for e in events.of_kind(EventKind.ZK_SESSION_STATE)] == [
        "connected",
        "suspended",
        "connected",
    ]


def test_an_expiry_then_a_new_session() -> None:
    calls: list[str] = []
    on_state, _ = listener(calls)
    for state in (KazooState.SUSPENDED, KazooState.LOST, KazooState.CONNECTED):
        on_state(state)
    assert calls == ["suspended", "expired", "connected", "new_session"]
