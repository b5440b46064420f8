"""The persistent paths a broker creates at start-up, against Kafka 2.8's
`ZkData.PersistentZkPaths` (with one `/config/<type>` per entry of `ConfigType.all`).
Those of features the testbed does not have are left out, and nothing creates Kafka's
`/cluster/id` (kafka-differences.md, Persistent paths and the cluster id)."""

from __future__ import annotations

from zkdata import paths

KAFKA_2_8 = {
    "/consumers",
    "/brokers/ids",
    "/brokers/topics",
    "/config/changes",
    "/admin/delete_topics",
    "/brokers/seqid",
    "/isr_change_notification",
    "/latest_producer_id_block",
    "/log_dir_event_notification",
    "/config/topics",
    "/config/clients",
    "/config/users",
    "/config/brokers",
    "/config/ips",
}

#: Transactions' producer id blocks, and the client, user and IP quota configs.
LEFT_OUT = {"/latest_producer_id_block", "/config/clients", "/config/users", "/config/ips"}


def test_the_persistent_paths_are_kafkas_but_those_of_absent_features() -> None:
    assert set(paths.PERSISTENT_PATHS) == KAFKA_2_8 - LEFT_OUT
    assert len(paths.PERSISTENT_PATHS) == len(set(paths.PERSISTENT_PATHS))


def test_no_cluster_id_path_is_known() -> None:
    assert not any(
        value == "/cluster" or str(value).startswith("/cluster/")
        for value in vars(paths).values()
        if isinstance(value, str)
    )
