"""Errors of the ZooKeeper layer.

    ZkDataError
    ├── ZnodeFormatError          a znode's bytes do not decode (bad JSON, wrong types, bad version)
    ├── BrokerIdInUseError        /brokers/ids/N belongs to another session
    ├── TopicExistsError          creating a topic whose znode exists
    └── ControllerMovedError      an epoch-fenced write or the election lost to another controller

Kazoo's own exceptions (connection loss, session expiry) pass through unchanged.
Raised on the thread that made the ZooKeeper call.
"""

from __future__ import annotations


class ZkDataError(Exception):
    """Root of the errors raised by `zkdata`."""


class ZnodeFormatError(ZkDataError):
    """A znode's data could not be decoded; `path` names the znode when known."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.reason = message


class BrokerIdInUseError(ZkDataError):
    """Another session owns the ephemeral registration of this broker id."""


class TopicExistsError(ZkDataError):
    """The topic already exists."""


class ControllerMovedError(ZkDataError):
    """The controller epoch changed underneath us: another broker is (or became) controller."""
