"""The inter-broker protocol versions a cluster may run (Kafka's
`inter.broker.protocol.version`, `--inter-broker-protocol`, `INTER_BROKER_PROTOCOL`), and
what each means for the ISR: at `2.6`, the default, partition leaders write ISR changes to
the state znode and announce them under `/isr_change_notification` (Kafka 2.5, and 2.8
below IBP 2.7); at `2.7` they ask the controller with AlterIsr (KIP-497, Kafka 2.8's
default). The broker (`broker_node.config`) and the tools that start and record clusters
(`chaos`) read them here. Pure values; any thread.
"""

from __future__ import annotations

IBP_2_6 = "2.6"
IBP_2_7 = "2.7"
#: Every version, the default first.
INTER_BROKER_PROTOCOLS = (IBP_2_6, IBP_2_7)
DEFAULT_INTER_BROKER_PROTOCOL = IBP_2_6
INTER_BROKER_PROTOCOL_FLAG = "--inter-broker-protocol"


def check_inter_broker_protocol(raw: str) -> str:
    """`raw` stripped if it names a version; ValueError naming the choices otherwise."""
    value = raw.strip()
    if value not in INTER_BROKER_PROTOCOLS:
        choices = " or ".join(INTER_BROKER_PROTOCOLS)
        raise ValueError(f"the inter-broker protocol must be {choices}, got {raw!r}")
    return value


def uses_alter_isr(version: str) -> bool:
    """True when leaders send AlterIsr rather than write the ISR themselves."""
    return version == IBP_2_7
