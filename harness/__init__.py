"""The cluster harness that tests, benchmarks and chaos runs share: a real ZooKeeper ensemble
of local JVMs (`zk_ensemble`; its members' client side, plaintext or TLS, in `zk_config`),
brokers as local processes (`brokers`), the compose cluster seen from the host (`compose`,
imported on its own: it needs the docker SDK), deadline-bound waits (`waiting`) and free
loopback ports (`ports`)."""

from harness.brokers import BrokerProcess
from harness.ports import free_ports
from harness.waiting import wait_until
from harness.zk_config import four_letter_word
from harness.zk_ensemble import (
    ZkEnsemble,
    expire_session,
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
