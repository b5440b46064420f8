"""The cluster harness that tests, benchmarks and chaos runs share: a real ZooKeeper ensemble
of local JVMs (`zk_ensemble`), brokers as local processes (`brokers`), the compose cluster
seen from the host (`compose`, imported on its own: it needs the docker SDK), deadline-bound
waits (`waiting`) and free loopback ports (`ports`).

Everything here starts real processes and waits on conditions with deadlines; nothing
imports the controller or the broker (brokers run as `python -m broker_node`). Calls run
on the caller's thread.
"""

from harness.brokers import BrokerProcess
from harness.ports import free_ports
from harness.waiting import wait_until
from harness.zk_ensemble import (
    ZkEnsemble,
    expire_session,
    four_letter_word,
    missing_prerequisites,
    new_chroot,
    open_client,
)

__all__ = [
    "BrokerProcess",
    "ZkEnsemble",
    "expire_session",
    "four_letter_word",
    "free_ports",
    "missing_prerequisites",
    "new_chroot",
    "open_client",
    "wait_until",
]
