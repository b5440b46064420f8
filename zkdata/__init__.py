"""The ZooKeeper layout of the testbed, shared by brokers, the controller, chaos and the CLI.

Paths (`paths`), value objects (`model`), byte-compatible Kafka 2.x codecs (`znodes`,
`admin_znodes`) and a client in Kafka's terms (`client`). Decoding bad bytes raises
`ZnodeFormatError` only. Each module says which thread calls it.
"""

from zkdata.errors import BrokerIdInUseError, ControllerMovedError, ZkDataError, ZnodeFormatError

__all__ = ["BrokerIdInUseError", "ControllerMovedError", "ZkDataError", "ZnodeFormatError"]
