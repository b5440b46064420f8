"""Rule construction, tagging and the parsing of `iptables -S` listings."""

from __future__ import annotations

import socket
import struct

import pytest

from chaos.errors import FaultFailed
from chaos.faults.delay_proxy import original_destination
from chaos.faults.latency import PROXY_MARK, unproxied
from chaos.faults.netns import Netns, netns_of
from chaos.faults.probe import (
    BYPASS_MARK,
    HTTP2_PREFACE,
    TLS_HANDSHAKE,
    connects_argv,
    round_trips_argv,
    udp_burst_argv,
)
from chaos.faults.rules import (
    TAG_PREFIX,
    Hook,
    chain_rules,
    chain_setup,
    chain_teardown,
    count_arrivals,
    delete_argv,
    drop_from,
    drop_randomly,
    fault_id,
    packet_counts,
    redirect,
    tag,
    tagged_lines,
)
from chaos.faults.testing import FakeCluster

LISTING = """-P INPUT ACCEPT
-N TESTBED-CHAOS-IN
-A INPUT -j TESTBED-CHAOS-IN
-A TESTBED-CHAOS-IN -s 10.0.0.5/32 -m comment --comment "testbed-chaos:loss-1" -c 7 420 -j DROP
-A TESTBED-CHAOS-IN ! -i lo -m comment --comment "testbed-chaos:loss-1" -c 100 6000
-A TESTBED-CHAOS-IN -s 10.0.0.6/32 -m comment --comment "testbed-chaos:loss-12" -c 3 9 -j DROP
-A DOCKER_OUTPUT -d 127.0.0.11/32 -m comment --comment "docker dns" -j DNAT
"""


def test_rule_argv_appends_into_our_chain_with_the_fault_comment() -> None:
    rule = drop_from("10.0.0.5")
    assert rule.argv("-A", "zk-isolate-abc") == (
        "-w", "-t", "filter", "-A", "TESTBED-CHAOS-IN", "-s", "10.0.0.5/32", "-j", "DROP",
        "-m", "comment", "--comment", "testbed-chaos:zk-isolate-abc",
    )  # fmt: skip


def test_each_hook_has_its_table_builtin_and_own_chain() -> None:
    assert [(h.table, h.builtin, h.chain) for h in Hook] == [
        ("filter", "INPUT", "TESTBED-CHAOS-IN"),
        ("filter", "OUTPUT", "TESTBED-CHAOS-OUT"),
        ("nat", "OUTPUT", "TESTBED-CHAOS-NAT"),
    ]


def test_random_drop_carries_the_probability_and_spares_loopback() -> None:
    rule = drop_randomly(0.2)
    assert rule.hook is Hook.IN
    assert rule.spec[:3] == ("!", "-i", "lo")
    assert "0.2000" in rule.spec
    assert rule.spec[-2:] == ("-j", "DROP")
    assert count_arrivals().spec == ("!", "-i", "lo")


@pytest.mark.parametrize("probability", [0.0, -0.1, 1.5])
def test_random_drop_refuses_a_probability_out_of_range(probability: float) -> None:
    with pytest.raises(ValueError, match="probability"):
        drop_randomly(probability)


def test_redirect_skips_the_proxys_marked_sockets() -> None:
    rule = redirect("10.0.0.7", 2181, 40123, 0x7E57)
    assert rule.hook is Hook.NAT_OUT
    assert rule.spec == (
        "-p", "tcp", "-d", "10.0.0.7/32", "--dport", "2181",
        "-m", "mark", "!", "--mark", "0x7e57", "-j", "REDIRECT", "--to-ports", "40123",
    )  # fmt: skip


@pytest.mark.parametrize("bad", ["", "has space", 'quo"te', "x" * 200, "-lead"])
def test_tag_refuses_ids_iptables_would_mangle(bad: str) -> None:
    with pytest.raises(ValueError, match="fault id"):
        tag(bad)


def test_fault_id_is_stable_and_differs_by_description() -> None:
    a = fault_id("loss", '{"percent": 20, "targets": ["broker1"]}')
    assert a == fault_id("loss", '{"percent": 20, "targets": ["broker1"]}')
    assert a != fault_id("loss", '{"percent": 30, "targets": ["broker1"]}')
    assert a.startswith("loss-")
    assert tag(a) == TAG_PREFIX + a


def test_tagged_lines_match_the_exact_fault_only() -> None:
    lines = tagged_lines(LISTING, "loss-1")
    assert len(lines) == 2
    assert all('"testbed-chaos:loss-1"' in line for line in lines)
    assert len(tagged_lines(LISTING)) == 3
    assert tagged_lines(LISTING, "loss-2") == []


def test_packet_counts_read_the_counters_in_rule_order() -> None:
    assert packet_counts(LISTING, "loss-1") == [7, 100]


def test_packet_counts_need_a_verbose_listing() -> None:
    with pytest.raises(ValueError, match="counters"):
        packet_counts(LISTING.replace("-c 7 420 ", ""), "loss-1")


def test_delete_argv_turns_a_listed_rule_into_its_deletion() -> None:
    line = tagged_lines(LISTING.replace("-c 3 9 ", ""), "loss-12")[0]
    assert delete_argv("filter", line) == (
        "-w", "-t", "filter", "-D", "TESTBED-CHAOS-IN", "-s", "10.0.0.6/32",
        "-m", "comment", "--comment", "testbed-chaos:loss-12", "-j", "DROP",
    )  # fmt: skip
    with pytest.raises(ValueError, match="not a rule"):
        delete_argv("filter", "-N TESTBED-CHAOS-IN")


def test_chain_rules_and_set_up_and_tear_down_commands() -> None:
    assert len(chain_rules(LISTING, "TESTBED-CHAOS-IN")) == 3
    show, create, jump = chain_setup(Hook.NAT_OUT)
    assert show == ("-w", "-t", "nat", "-S", "TESTBED-CHAOS-NAT")
    assert create == ("-w", "-t", "nat", "-N", "TESTBED-CHAOS-NAT")
    assert jump == ("-w", "-t", "nat", "-I", "OUTPUT", "-j", "TESTBED-CHAOS-NAT")
    unjump, delete = chain_teardown(Hook.IN)
    assert unjump == ("-w", "-t", "filter", "-D", "INPUT", "-j", "TESTBED-CHAOS-IN")
    assert delete == ("-w", "-t", "filter", "-X", "TESTBED-CHAOS-IN")


def test_commands_run_under_nsenter_in_the_network_namespace_only() -> None:
    assert Netns(4242).argv(["iptables", "-S"]) == ["nsenter", "-t", "4242", "-n", "iptables", "-S"]


def test_probe_command_lines_carry_their_arguments() -> None:
    connect = connects_argv([("10.0.0.1", 2181), ("10.0.0.2", 9092)], 1.5)
    assert connect[1] == "-c"
    # the link probes pass a latency's redirect by its mark: they test the link itself
    assert connect[3:] == ["1.5", '[["10.0.0.1", 2181], ["10.0.0.2", 9092]]', str(BYPASS_MARK)]
    assert BYPASS_MARK == PROXY_MARK
    trips = round_trips_argv(("10.0.0.1", 2181), 3, 5.0, mark=0x7E57)
    assert trips[3:5] == ["10.0.0.1", "2181"]
    assert bytes.fromhex(trips[5])[0] == TLS_HANDSHAKE  # ZooKeeper's port speaks TLS only
    assert trips[6:] == ["3", "5.0", str(0x7E57), HTTP2_PREFACE.hex()]
    assert udp_burst_argv(("10.0.0.3", 9), 500)[3:] == ["10.0.0.3", "9", "500"]


SS_OUTPUT = """\
0 0 172.25.0.5:39748 172.25.0.4:2181 users:(("python",pid=11008,fd=6))
0 0 172.25.0.5:39764 172.25.0.4:2181 users:(("python",pid=12600,fd=9))
0 24 127.0.0.1:38797 172.25.0.5:39748 users:(("python",pid=12600,fd=8))
0 0 172.25.0.5:45438 172.25.0.7:9092 users:(("python",pid=11008,fd=17))
0 0 172.25.0.5:58628 172.25.0.5:9092 users:(("python",pid=11008,fd=14))
"""
PEERS = {("172.25.0.4", 2181), ("172.25.0.7", 9092)}


def test_unproxied_finds_the_connections_that_bypass_the_proxy() -> None:
    assert unproxied(SS_OUTPUT, PEERS, {12600}) == ["172.25.0.5:45438->172.25.0.7:9092"]


def test_without_a_proxy_every_peer_connection_is_straight() -> None:
    assert unproxied(SS_OUTPUT, PEERS, set()) == [
        "172.25.0.5:39748->172.25.0.4:2181",
        "172.25.0.5:39764->172.25.0.4:2181",
        "172.25.0.5:45438->172.25.0.7:9092",
    ]


class RedirectedSocket:
    """A socket whose `SO_ORIGINAL_DST` is 10.1.2.3:2181."""

    def getsockopt(self, level: int, option: int, size: int) -> bytes:
        assert (level, option, size) == (socket.SOL_IP, 80, 16)
        return (
            struct.pack("=H", socket.AF_INET)
            + struct.pack("!H", 2181)
            + bytes([10, 1, 2, 3])
            + bytes(8)
        )


def test_the_proxy_reads_the_original_destination_of_a_redirected_socket() -> None:
    assert original_destination(RedirectedSocket()) == ("10.1.2.3", 2181)  # type: ignore[arg-type]


class _DyingCluster(FakeCluster):
    """A container that exits between the read of its state and that of its pid, as a
    kill of another step may make it."""

    def pid(self, service: str) -> int:
        if service == "zk2":
            raise FaultFailed("zk2 has no process (exited)")
        return super().pid(service)


def test_a_container_that_exits_between_two_reads_has_no_namespace() -> None:
    """A soak's run: a latency's stop met a ZooKeeper server a leader kill had just
    stopped, failed, and left its proxy running."""
    cluster = _DyingCluster()
    assert netns_of(cluster, "zk2") is None
    assert netns_of(cluster, "zk1") == Netns(cluster.pid("zk1"))
