"""The broker's kazoo session: creation (with the chroot made if missing) and the session
state listener.

The listener runs on kazoo's connection thread and only records the change and hands it
on: suspension -> the controller stops acting (its event thread holds events); the
connection back -> it acts again; expiry -> the controller's Expire event; the new session
after an expiry -> the controller's RegisterBrokerAndReelect event.
"""

from __future__ import annotations

from collections.abc import Callable

from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState

from eventlog import EventLog, ZkSessionState
from security.zk_credentials import ZkDigestCredentials, kazoo_options
from security.zk_tls import ZkTls
from zkdata import paths


def ensure_chroot(
    connect: str,
    timeout_s: float,
    credentials: ZkDigestCredentials | None = None,
    tls: ZkTls | None = None,
) -> None:
    """Create the chroot of `connect` (if it has one) with a short-lived session (secured
    like every other znode when `credentials` are given; over TLS with `tls`)."""
    hosts, chroot = paths.split_chroot(connect)
    if not chroot:
        return
    client = KazooClient(hosts=hosts, timeout=timeout_s, **kazoo_options(credentials, tls))
    client.start(timeout=timeout_s)
    try:
        client.ensure_path(chroot)
    finally:
        client.stop()
        client.close()


def new_client(
    connect: str,
    session_timeout_ms: int,
    credentials: ZkDigestCredentials | None = None,
    tls: ZkTls | None = None,
) -> KazooClient:
    """A kazoo client that reconnects forever and retries commands within twice the
    session timeout (an expired session is not retried: the listener handles it). With
    `credentials` it authenticates by digest on every (re)connection and creates znodes
    with Kafka's secure ACLs; with `tls` every connection is TLS."""
    session_s = session_timeout_ms / 1000
    return KazooClient(
        hosts=connect,
        **kazoo_options(credentials, tls),
        timeout=session_s,
        connection_retry={"max_tries": -1, "delay": 0.1, "backoff": 2, "max_delay": 1.0},
        command_retry={
            "max_tries": -1,
            "delay": 0.05,
            "backoff": 2,
            "max_delay": 1.0,
            "deadline": max(10.0, 2 * session_s),
            "ignore_expire": False,
        },
    )


class SessionListener:
    """Follows kazoo's state changes for one broker (kazoo's connection thread)."""

    def __init__(
        self,
        client: KazooClient,
        event_log: EventLog,
        on_expired: Callable[[], None],
        on_new_session: Callable[[], None],
        on_suspended: Callable[[], None] = lambda: None,
        on_connected: Callable[[], None] = lambda: None,
    ) -> None:
        self._client = client
        self._events = event_log
        self._on_expired = on_expired
        self._on_new_session = on_new_session
        self._on_suspended = on_suspended
        self._on_connected = on_connected
        self._expired = False

    def __call__(self, state: KazooState) -> None:
        client_id = self._client.client_id
        session = f"0x{client_id[0]:x}" if client_id else None
        self._events.emit(ZkSessionState(state=str(state).lower(), session_id=session))
        if state == KazooState.LOST:
            self._expired = True
            self._on_expired()
        elif state == KazooState.SUSPENDED:
            self._on_suspended()
        elif state == KazooState.CONNECTED:
            self._on_connected()
            if self._expired:
                self._expired = False
                self._on_new_session()
