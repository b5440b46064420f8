"""An earlier run's stuck admin work on a kept cluster: a run refuses to start on it, and
the hunt's tidying clears it.

Setup: the chaos tier's compose cluster. A topic whose znode says a replica is being
added on broker 4, which never registers (what a run leaves when its reassignment
cannot finish), queued for deletion (deletion waits for the reassignment, forever).
Steps: `check_no_leftovers` with a short wait; `chaos.hunt.tidy.tidy`; the check again.
Validate: the first check raises `LeftoverWork` naming the topic's partition and its
deletion; after the tidying the topic is gone, every broker is registered, a
controller is elected and the check passes.
"""

from __future__ import annotations

import pytest

from admin.topics import delete_topic
from chaos.cluster.handle import ClusterHandle
from chaos.hunt.tidy import tidy
from chaos.run.setup import LeftoverWork, check_no_leftovers
from harness.compose import ComposeCluster
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment
from zkdata.znodes import TopicZNode

pytestmark = pytest.mark.chaos

TOPIC = "chaos-leftover"


def leave_stuck_work(zk: KafkaZkClient) -> None:
    """A topic moving its partition's second replica to a broker that never comes, and
    its deletion requested."""
    stuck = TopicAssignment({0: ReplicaAssignment((1, 4, 2), (4,), (2,))})
    zk.kazoo.create(paths.topic(TOPIC), TopicZNode.encode(stuck), makepath=True)
    delete_topic(zk, TOPIC)


@pytest.mark.timeout(300)
def test_stuck_work_refuses_a_run_and_tidying_clears_it(chaos_cluster: ComposeCluster) -> None:
    with ClusterHandle.for_project(chaos_cluster.project) as cluster:
        cluster.read_zk(leave_stuck_work)
        with pytest.raises(LeftoverWork, match=f"reassigning {TOPIC}-0") as refused:
            check_no_leftovers(cluster, timeout_s=3)
        assert refused.value.leftovers.deleting == (TOPIC,)
        said: list[str] = []
        tidy(chaos_cluster.project, refused.value.leftovers, said.append)
        assert said[-1] == f"tidied {chaos_cluster.project}: removed topics {TOPIC}"
        assert TOPIC not in cluster.read_zk(lambda zk: zk.get_all_topics())
        assert all(cluster.broker_registered(b) for b in cluster.brokers())
        assert cluster.controller_id() is not None
        check_no_leftovers(cluster, timeout_s=3)
