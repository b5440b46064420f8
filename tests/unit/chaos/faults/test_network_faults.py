"""Network faults as values: kinds, descriptions that rebuild them, stable ids, the
grudges they compute, and clear errors for bad parameters."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chaos.errors import UnknownTarget
from chaos.faults import latency, links, network
from chaos.faults.base import Check
from chaos.faults.fields import BadFaultData
from chaos.faults.grudge import GrudgeError
from chaos.faults.latency import Latency
from chaos.faults.links import broker_id, of_role, port, role
from chaos.faults.lost_reply import ZkLostReply
from chaos.faults.netfault import NetworkFault
from chaos.faults.network import (
    BrokerIsolate,
    Partition,
    SessionExpire,
    ZkIsolate,
)
from chaos.faults.packets import Bandwidth, PacketLoss, ZkDeaf
from chaos.faults.registry import FAULT_TYPES
from chaos.faults.rules import ZK_DATA_MIN_LENGTH, drop_data_from
from chaos.faults.testing import FakeCluster
from chaos.faults.zk_reset import ZkReset

SERVICES = ("zk1", "zk2", "zk3", "broker1", "broker2", "broker3")


class Services:
    """Just enough of a FaultTarget for the grudges: the project's services."""

    def services(self) -> tuple[str, ...]:
        return SERVICES


EXAMPLES: list[Any] = [
    Partition(("broker1", "broker2", "broker3"), "halves", seed=4),
    Partition(SERVICES, "majorities-ring"),
    ZkIsolate(("broker2",)),
    ZkDeaf(("broker1",)),
    BrokerIsolate(("broker1", "broker3")),
    SessionExpire(("broker3",), expire_deadline_s=20.0, register_deadline_s=45.0),
    PacketLoss(("broker1",), 20.0),
    Bandwidth(("broker2",), 256),
    Latency(("broker3",), 100),
    ZkLostReply(("broker2",), 1.5),
    ZkReset(("broker1",)),
]


NETWORK_KINDS = {kind: FAULT_TYPES[kind].rebuild for kind in (
    "partition", "zk-isolate", "zk-deaf", "broker-isolate", "session-expire", "loss",
    "bandwidth", "latency", "zk-lost-reply", "zk-reset",
)}  # fmt: skip


def test_the_registry_names_the_network_kinds() -> None:
    assert set(NETWORK_KINDS) == {
        "partition", "zk-isolate", "zk-deaf", "broker-isolate", "session-expire", "loss",
        "bandwidth", "latency", "zk-lost-reply", "zk-reset",
    }  # fmt: skip
    assert {fault.kind for fault in EXAMPLES} == set(NETWORK_KINDS)


@pytest.mark.parametrize("fault", EXAMPLES, ids=lambda f: f.kind)
def test_description_is_json_and_rebuilds_an_equal_fault(fault: Any) -> None:
    text = json.dumps(fault.describe())
    rebuilt = NETWORK_KINDS[fault.kind](json.loads(text))
    assert isinstance(rebuilt, NetworkFault)
    assert rebuilt == fault
    assert rebuilt.fault_id == fault.fault_id
    assert list(rebuilt.targets) == json.loads(text)["targets"]


def test_fault_ids_differ_between_faults() -> None:
    ids = [fault.fault_id for fault in EXAMPLES]
    assert len(set(ids)) == len(ids)
    assert ZkIsolate(("broker1",)).fault_id != ZkIsolate(("broker2",)).fault_id


@pytest.mark.parametrize(
    ("kind", "params"),
    [("loss", {"percent": 20}), ("bandwidth", {"rate_kbit": 256}), ("latency", {"delay_ms": 100})],
)
def test_catalog_builds_from_the_documented_params(kind: str, params: dict[str, Any]) -> None:
    fault = NETWORK_KINDS[kind]({"targets": ["broker1"], **params})
    assert fault.targets == ("broker1",)
    assert fault.describe() == {"targets": ["broker1"], **params}


def test_session_expire_builds_from_targets_alone() -> None:
    fault = NETWORK_KINDS["session-expire"]({"targets": ["broker2"]})
    assert fault == SessionExpire(("broker2",))


@pytest.mark.parametrize(
    "description", [{}, {"targets": "broker1"}, {"targets": [1]}, {"targets": []}]
)
def test_catalog_refuses_missing_or_malformed_targets(description: dict[str, Any]) -> None:
    with pytest.raises(BadFaultData, match="target"):
        NETWORK_KINDS["zk-isolate"](description)


def test_partition_refuses_an_unknown_grudge_and_an_impossible_one() -> None:
    with pytest.raises(GrudgeError, match="unknown grudge"):
        Partition(("broker1", "broker2"), "triangle")
    with pytest.raises(GrudgeError, match="at least 4"):
        Partition(("broker1", "broker2", "broker3"), "majorities-ring")


@pytest.mark.parametrize(
    "build",
    [
        lambda: PacketLoss(("broker1",), 0),
        lambda: PacketLoss(("broker1",), 150),
        lambda: Bandwidth(("broker1",), 0),
        lambda: Latency(("broker1",), 0),
        lambda: Latency(("broker1",), 60_000),
    ],
)
def test_out_of_range_parameters_are_refused(build: Any) -> None:
    with pytest.raises(BadFaultData, match="must be"):
        build()


def test_seeded_partition_repeats_its_grudge() -> None:
    services = ("broker1", "broker2", "broker3", "zk1")
    fault = Partition(services, "halves", seed=11)
    assert fault.grudge_of(services) == Partition(services, "halves", seed=11).grudge_of(services)


def test_zk_isolate_grudge_cuts_the_broker_from_every_zk_server_both_ways() -> None:
    grudge = ZkIsolate(("broker2",)).grudge(Services())  # type: ignore[arg-type]
    assert grudge["broker2"] == frozenset({"zk1", "zk2", "zk3"})
    assert all(grudge[zk] == frozenset({"broker2"}) for zk in ("zk1", "zk2", "zk3"))
    assert "broker1" not in grudge


def test_zk_deaf_drops_only_long_segments_from_zookeeper() -> None:
    rule = drop_data_from("10.0.0.7")
    assert rule.argv("-A", "zk-deaf-x")[4:] == (
        "TESTBED-CHAOS-IN", "-s", "10.0.0.7/32", "-p", "tcp", "-m", "length", "--length",
        "68:65535", "-j", "DROP", "-m", "comment", "--comment", "testbed-chaos:zk-deaf-x",
    )  # fmt: skip
    # a pure ACK (20 + 32 bytes) and a SYN-ACK with options (60) pass; a ping's reply does not
    assert 52 < 60 < ZK_DATA_MIN_LENGTH <= 20 + 32 + 16
    assert ZkDeaf(("broker2",)).kind == "zk-deaf"


def test_broker_isolate_grudge_cuts_each_target_from_the_other_brokers() -> None:
    grudge = BrokerIsolate(("broker1",)).grudge(Services())  # type: ignore[arg-type]
    assert grudge == {
        "broker1": frozenset({"broker2", "broker3"}),
        "broker2": frozenset({"broker1"}),
        "broker3": frozenset({"broker1"}),
    }


def test_session_expire_cuts_like_zk_isolate() -> None:
    services = Services()
    fault = SessionExpire(("broker1",))
    assert fault.grudge(services) == ZkIsolate(("broker1",)).grudge(services)  # type: ignore[arg-type]
    assert fault.fault_id != ZkIsolate(("broker1",)).fault_id


def test_bandwidth_qdisc_is_a_token_bucket_at_the_rate() -> None:
    qdisc = Bandwidth(("broker1",), 256).qdisc()
    assert qdisc[:3] == ("tbf", "rate", "256kbit")
    assert int(qdisc[qdisc.index("burst") + 1]) >= 1514


def test_services_have_roles_ports_and_broker_ids() -> None:
    assert [role(s) for s in SERVICES] == ["zk"] * 3 + ["broker"] * 3
    assert port("zk2") == 2181
    assert port("broker1") == 9092
    assert broker_id("broker3") == 3
    assert of_role(SERVICES, "broker") == ("broker1", "broker2", "broker3")
    with pytest.raises(UnknownTarget):
        role("kafka1")
    with pytest.raises(UnknownTarget):
        broker_id("zk1")


def test_latency_proxies_are_tagged_per_broker() -> None:
    fault = Latency(("broker1", "broker2"), 100)
    assert fault.proxy_tag("broker1") == f"{fault.fault_id}.broker1"


@pytest.mark.parametrize(
    ("via_ms", "around_ms", "shows"),
    [
        (102.0, 2.0, True),  # the delay on top of a fast round trip
        (105.0, 30.0, True),  # a slow upstream connect hidden inside the delay
        (12.0, 2.0, False),  # no delay
        (95.0, 60.0, False),  # as slow around the proxy as through it
        (330.0, 2.0, True),  # the proxy's turn late on a loaded host
        (400.0, 2.0, False),  # far more than the delay: two delays stacked
    ],
)
def test_latency_judges_round_trips_through_and_around_the_proxy(
    via_ms: float, around_ms: float, shows: bool
) -> None:
    assert Latency(("broker1",), 100).plausible(via_ms, around_ms) is shows


class _Measured:
    """Records the grudges `measure_links` is asked to prove."""

    def __init__(self) -> None:
        self.grudges: list[dict[str, frozenset[str]]] = []

    def __call__(self, cluster: Any, grudge: Any, services: Any) -> Check:
        self.grudges.append(dict(grudge))
        return Check(True, "links as expected")


def test_a_zk_cut_over_a_broker_cut_expects_both_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    measured = _Measured()
    monkeypatch.setattr(network, "measure_links", measured)
    cluster = FakeCluster()
    brokers_cut = BrokerIsolate(("broker1",)).cut_links(cluster)
    check = ZkIsolate(("broker1",)).took_effect_beside(cluster, brokers_cut)
    assert check.ok
    assert "beside links other faults cut" in check.detail
    (grudge,) = measured.grudges
    assert grudge["broker1"] == frozenset({"broker2", "broker3", "zk1", "zk2", "zk3"})
    assert grudge["zk2"] == frozenset({"broker1"})
    assert grudge["broker2"] == frozenset({"broker1"})


def test_an_undo_beside_another_cut_expects_only_that_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    measured = _Measured()
    monkeypatch.setattr(network, "measure_links", measured)
    monkeypatch.setattr(NetworkFault, "no_rules_left", lambda self, c: Check(True, "none left"))
    cluster = FakeCluster()
    zk_cut = ZkIsolate(("broker1",)).cut_links(cluster)
    fault = BrokerIsolate(("broker1",))
    assert fault.undone_beside(cluster, zk_cut).ok
    assert fault.undone(cluster).ok
    assert measured.grudges == [dict(zk_cut), {}]


def test_without_other_cuts_took_effect_measures_the_fault_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    measured = _Measured()
    monkeypatch.setattr(network, "measure_links", measured)
    cluster = FakeCluster()
    check = Partition(("broker1", "broker2"), "halves").took_effect(cluster)
    assert check.detail == "links as expected"
    assert measured.grudges == [
        {"broker1": frozenset({"broker2"}), "broker2": frozenset({"broker1"})}
    ]


class _QuietNetns:
    """A namespace whose connections all go through the proxy, with the fault's
    redirects to `sent` laid."""

    def __init__(self, sent: tuple[str, ...]) -> None:
        self.sent = sent

    def run(self, argv: list[str]) -> Any:
        return type("Done", (), {"stdout": ""})()

    def leftovers(self, fault_id: str | None = None) -> list[str]:
        cluster = FakeCluster()
        return [
            f"-A TESTBED-CHAOS-NAT -d {cluster.ip(s)}/32 -p tcp -m tcp --dport {port(s)} -m mark "
            f'! --mark 0x7e57 -m comment --comment "testbed-chaos:{fault_id}" -j REDIRECT '
            "--to-ports 40000"
            for s in self.sent
        ]


def _latency_took_effect(
    monkeypatch: pytest.MonkeyPatch,
    times: list[list[float]],
    sent: tuple[str, ...] = ("broker2", "zk1"),
) -> tuple[bool, str]:
    fault = Latency(("broker1",), 100)
    monkeypatch.setattr(latency, "running_netns", lambda cluster, broker: _QuietNetns(sent))
    monkeypatch.setattr(latency, "run_all", lambda probes: times)
    monkeypatch.setattr(Latency, "proxies", lambda self: {4242: "broker1"})
    monkeypatch.setattr(Latency, "_peers", lambda self, cluster, broker: ["broker2", "zk1"])
    check = fault.took_effect(FakeCluster())
    return check.ok, check.detail


def test_a_latency_is_judged_on_the_links_another_fault_does_not_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a soak's run: a zk-isolate of the same broker cut its links to ZooKeeper, and the
    # latency, unable to time them, waited out its 41 s and held the step loop up
    ok, detail = _latency_took_effect(monkeypatch, [[0.102], [0.002], [], []])
    assert ok, detail
    assert "broker1->broker2 +100 ms" in detail
    assert "broker1->zk1: cut around the proxy too, not judged" in detail


def test_a_latency_with_every_link_cut_or_none_through_the_proxy_has_not_taken_effect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ok, detail = _latency_took_effect(monkeypatch, [[], [], [], []])
    assert not ok
    assert "nothing to judge" in detail
    ok, detail = _latency_took_effect(monkeypatch, [[], [0.002], [], []])
    assert not ok
    assert "broker1->broker2: no round trip" in detail


def test_a_peer_down_when_the_redirects_were_laid_is_not_judged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a soak's runs: a peer killed when the latency started came back undelayed, and the
    # latency waited out its 30 s for a delay it had never laid on that link
    ok, detail = _latency_took_effect(monkeypatch, [[0.102], [0.002]], sent=("broker2",))
    assert ok, detail
    assert "not redirected, not judged: broker1->zk1" in detail


def test_the_redirected_destinations_are_read_from_the_rules() -> None:
    lines = _QuietNetns(("broker2", "zk1")).leftovers("latency-1")
    cluster = FakeCluster()
    expected = {(cluster.ip("broker2"), port("broker2")), (cluster.ip("zk1"), port("zk1"))}
    assert latency.redirected([*lines, "-A TESTBED-CHAOS-IN -s 10.0.0.9/32 -j DROP"]) == expected


class RecordingNetns:
    def __init__(self, service: str, laid: dict[str, list[str]]) -> None:
        self.service, self.laid = service, laid

    def add_rules(self, fault_id: str, rules: Any) -> None:
        self.laid.setdefault(self.service, []).extend(str(r) for r in rules)


def test_a_cut_is_laid_among_the_services_that_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # a blind hunt's run: a session expiry while another fault had stopped zk1
    cluster = FakeCluster()
    zk1, zk2 = cluster.ip("zk1"), cluster.ip("zk2")
    cluster.stop("zk1", 10)
    laid: dict[str, list[str]] = {}
    monkeypatch.setattr(links, "running_netns", lambda c, s: RecordingNetns(s, laid))
    SessionExpire(("broker1",)).start(cluster)
    assert set(laid) == {"broker1", "zk2", "zk3"}
    assert not any(zk1 in rule for rule in laid["broker1"])
    assert any(zk2 in rule for rule in laid["broker1"])


def test_a_service_stopped_while_the_cut_is_laid_is_passed_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a blind hunt's run: a concurrent step killed zk2 between the address lookup and
    # the rules laid in its namespace
    cluster = FakeCluster()
    laid: dict[str, list[str]] = {}

    def netns(c: Any, service: str) -> RecordingNetns:
        if service == "zk2":
            raise UnknownTarget("zk2 is not running (exited)")
        return RecordingNetns(service, laid)

    monkeypatch.setattr(links, "running_netns", netns)
    SessionExpire(("broker1",)).start(cluster)
    assert set(laid) == {"broker1", "zk1", "zk3"}
