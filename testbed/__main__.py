"""`testbed`: the command line of the testbed.

    testbed cluster [--zk HOSTS] [--wait-brokers N] [--timeout S]
    testbed topics create --topic T (--partitions N --replication-factor R | --replica-assignment A)
                          [--config K=V ...]
    testbed topics list
    testbed topics delete --topic T
    testbed topics describe [--topic T ...]
    testbed elect-leaders --election-type preferred|unclean
        (--all-topic-partitions | --topic T [--partition P] | --path-to-json-file F)
    testbed zk ls|get|tree [PATH]
    testbed reassign generate --topics-to-move-json-file F --broker-list 1,2,3
    testbed reassign execute --reassignment-json-file F
    testbed reassign verify --reassignment-json-file F [--wait S]

Exit codes: 0 success, 1 the cluster could not be reached or did not become ready, or
the command failed (for `reassign verify`: a partition's reassignment failed), 2 bad
arguments, 3 (`reassign verify` only) some partitions are still being reassigned. Main
thread.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import grpc
from kazoo.client import KazooClient
from kazoo.handlers.threading import KazooTimeoutError

from controller.replica_assignment import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
)
from testbed.cluster_view import read_cluster, render
from testbed.elect import (
    ElectionCommandError,
    controller_address,
    elect,
    parse_partitions_file,
)
from testbed.elect import render as render_elections
from testbed.reassign import (
    ReassignCommandError,
    execute,
    generate,
    parse_broker_list,
    parse_reassignment,
    parse_topics_to_move,
    read_json_file,
    render_proposal,
    render_started,
)
from testbed.reassign_verify import (
    render_verification,
    verification_exit_code,
    verify,
    wait_for_reassignment,
)
from testbed.topics import (
    TopicCommandError,
    create_topic,
    delete_topic,
    describe_topics,
    filter_partitions,
    parse_configs,
    parse_replica_assignment,
    render_description,
)
from testbed.zk_tree import ZkPathError, get, ls, tree
from zkdata.client import KafkaZkClient
from zkdata.errors import TopicExistsError, ZnodeFormatError
from zkdata.model import TopicPartition

DEFAULT_ZK = "127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183"


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="testbed", description="Drive and inspect the testbed.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    cluster = sub.add_parser(
        "cluster",
        help="show ZooKeeper servers, brokers and their epochs, the controller",
        description="Show each ZooKeeper server's mode, the registered brokers with their "
        "broker epochs, the controller and the controller epoch.",
    )
    _add_zk(cluster)
    cluster.add_argument(
        "--wait-brokers",
        type=int,
        default=0,
        metavar="N",
        help="first wait until N brokers are registered and a controller is elected",
    )
    cluster.add_argument(
        "--timeout", type=_positive, default=60.0, help="seconds to wait (default 60)"
    )
    topics = sub.add_parser(
        "topics",
        help="create, list, describe and delete topics",
        description="Create, list, describe and delete topics (like kafka-topics.sh --zookeeper).",
    )
    topic_sub = topics.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = topic_sub.add_parser(
        "create",
        help="create a topic",
        description="Create a topic with a partition count and replication factor "
        "(Kafka's replica assignment over the live brokers) or an explicit assignment.",
    )
    _add_zk(create)
    create.add_argument("--topic", required=True, help="the topic name")
    create.add_argument("--partitions", type=int, help="number of partitions")
    create.add_argument("--replication-factor", type=int, help="replicas per partition")
    create.add_argument(
        "--replica-assignment",
        help="explicit assignment: partitions separated by ',', brokers by ':' (1:2,2:3)",
    )
    create.add_argument(
        "--config", action="append", default=[], metavar="KEY=VALUE", help="a topic config override"
    )
    listing = topic_sub.add_parser("list", help="list topics", description="List every topic.")
    _add_zk(listing)
    describe = topic_sub.add_parser(
        "describe",
        help="show partitions, leaders, replicas and ISRs",
        description="Show each partition's leader, replicas and ISR.",
    )
    _add_zk(describe)
    describe.add_argument("--topic", action="append", default=[], help="a topic (repeatable)")
    describe.add_argument(
        "--under-replicated-partitions",
        action="store_true",
        help="only partitions whose ISR is smaller than their replica set",
    )
    describe.add_argument(
        "--unavailable-partitions",
        action="store_true",
        help="only partitions without a live leader",
    )
    delete = topic_sub.add_parser(
        "delete",
        help="mark a topic for deletion",
        description="Mark a topic for deletion (writes /admin/delete_topics/T); the "
        "controller then deletes its partitions on every broker and its znodes.",
    )
    _add_zk(delete)
    delete.add_argument("--topic", required=True, help="the topic name")
    elect = sub.add_parser(
        "elect-leaders",
        help="run preferred or unclean leader elections",
        description="Ask the controller to elect leaders (like kafka-leader-election.sh): "
        "preferred moves leadership back to the first replica; unclean elects any live "
        "replica for partitions without a live leader.",
    )
    _add_zk(elect)
    elect.add_argument(
        "--election-type", required=True, choices=["preferred", "unclean"], help="the election"
    )
    which = elect.add_mutually_exclusive_group(required=True)
    which.add_argument("--all-topic-partitions", action="store_true", help="every partition")
    which.add_argument("--topic", help="one topic (all its partitions unless --partition)")
    which.add_argument(
        "--path-to-json-file", type=Path, help='{"partitions":[{"topic":..,"partition":..}]}'
    )
    elect.add_argument("--partition", type=int, help="one partition of --topic")
    elect.add_argument(
        "--controller-address",
        help="host:port of the controller's gRPC port when its advertised name does not "
        "resolve here (e.g. 127.0.0.1:9092 for broker2 of the compose cluster)",
    )
    zk = sub.add_parser(
        "zk",
        help="read-only view of the ZooKeeper tree",
        description="Read-only view of the ZooKeeper tree: ls, get (data and Stat), tree.",
    )
    _add_zk(zk)
    zk.add_argument("action", choices=["ls", "get", "tree"], help="what to show")
    zk.add_argument("path", nargs="?", default="/", help="a znode path (default /)")
    zk.add_argument("--depth", type=int, default=4, help="levels shown by tree (default 4)")
    _add_reassign(sub)
    return parser


def _add_reassign(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    reassign = sub.add_parser(
        "reassign",
        help="move partitions to other brokers",
        description="Move partitions to other brokers (like kafka-reassign-partitions.sh "
        "--zookeeper): generate proposes an assignment, execute writes "
        "/admin/reassign_partitions for the controller, verify reports progress.",
    )
    actions = reassign.add_subparsers(dest="action", required=True, metavar="ACTION")
    proposal = actions.add_parser(
        "generate",
        help="propose an assignment of whole topics over a list of brokers",
        description="Print the current assignment of the topics and a proposed one over "
        "--broker-list (Kafka's rack-unaware assignment, same partitions and replication "
        "factor). Nothing is written.",
    )
    _add_zk(proposal)
    proposal.add_argument(
        "--topics-to-move-json-file",
        type=Path,
        required=True,
        metavar="F",
        help='the topics: {"version":1,"topics":[{"topic":"t"}]}',
    )
    proposal.add_argument(
        "--broker-list", required=True, metavar="IDS", help="registered broker ids, e.g. 1,2,3"
    )
    start = actions.add_parser(
        "execute",
        help="start a reassignment",
        description="Check a reassignment file against the topics and registered brokers, "
        "print the current assignment (for a rollback), then write "
        "/admin/reassign_partitions for the controller.",
    )
    _add_zk(start)
    check = actions.add_parser(
        "verify",
        help="report the progress of a reassignment",
        description="Report each partition of a reassignment file as complete, in progress "
        "or failed. Exit code 0 when all are complete, 1 when any failed, 3 when some are "
        "still in progress.",
    )
    _add_zk(check)
    check.add_argument(
        "--wait",
        type=_positive,
        metavar="S",
        help="poll for up to S seconds until no partition is in progress",
    )
    for parser in (start, check):
        parser.add_argument(
            "--reassignment-json-file",
            type=Path,
            required=True,
            metavar="F",
            help='{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}',
        )


def _add_zk(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--zk",
        default=os.environ.get("ZK_CONNECT", DEFAULT_ZK),
        help=f"ZooKeeper connect string (ZK_CONNECT, default {DEFAULT_ZK})",
    )


class _Unreachable(Exception):
    pass


@contextmanager
def _zk_session(connect: str, timeout_s: float = 10.0) -> Iterator[KafkaZkClient]:
    client = KazooClient(hosts=connect, timeout=timeout_s)
    try:
        client.start(timeout=timeout_s)
    except KazooTimeoutError:
        client.close()
        raise _Unreachable(connect) from None
    try:
        yield KafkaZkClient(client)
    finally:
        client.stop()
        client.close()


def _topics(args: argparse.Namespace) -> int:
    with _zk_session(args.zk) as zk:
        if args.action == "create":
            if args.replica_assignment and (args.partitions or args.replication_factor):
                raise TopicCommandError(
                    "--replica-assignment cannot be combined with --partitions or "
                    "--replication-factor"
                )
            assignment = (
                parse_replica_assignment(args.replica_assignment)
                if args.replica_assignment
                else None
            )
            create_topic(
                zk,
                args.topic,
                args.partitions,
                args.replication_factor,
                assignment,
                parse_configs(args.config),
            )
            print(f"Created topic {args.topic}.")
        elif args.action == "list":
            for topic in sorted(zk.get_all_topics()):
                print(topic)
        elif args.action == "delete":
            if delete_topic(zk, args.topic):
                print(f"Topic {args.topic} is marked for deletion.")
                print("Note: This will have no impact if delete.topic.enable is not set to true.")
            else:
                print(f"Topic {args.topic} is already marked for deletion.")
        else:
            live = set(zk.get_all_brokers().brokers)
            described = filter_partitions(
                describe_topics(zk, args.topic),
                live,
                args.under_replicated_partitions,
                args.unavailable_partitions,
            )
            if described:
                print(render_description(described, live))
    return 0


USER_ERRORS = (
    ElectionCommandError,
    ZkPathError,
    TopicCommandError,
    TopicExistsError,
    InvalidTopicError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    InvalidReplicaAssignmentError,
    ZnodeFormatError,
    ReassignCommandError,
)


def _run(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    try:
        return command(args)
    except _Unreachable as exc:
        print(f"Error: cannot reach ZooKeeper at {exc}", file=sys.stderr)
        return 1
    except USER_ERRORS as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1


def _cluster(args: argparse.Namespace) -> int:
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            view = read_cluster(args.zk, timeout_s=min(10.0, args.timeout))
        except KazooTimeoutError:
            print(f"testbed: cannot reach ZooKeeper at {args.zk}", file=sys.stderr)
            return 1
        ready = len(view.brokers) >= args.wait_brokers and (
            args.wait_brokers == 0 or view.controller_id is not None
        )
        if ready or time.monotonic() >= deadline:
            print(render(view))
            if not ready:
                print(
                    f"\ntestbed: not ready after {args.timeout:g}s: {len(view.brokers)} of "
                    f"{args.wait_brokers} brokers registered",
                    file=sys.stderr,
                )
                return 1
            return 0
        time.sleep(0.5)  # polling the cluster until it is ready


def _elect(args: argparse.Namespace) -> int:
    if args.partition is not None and not args.topic:
        raise ElectionCommandError("--partition needs --topic")
    with _zk_session(args.zk) as zk:
        if args.all_topic_partitions:
            partitions: tuple[TopicPartition, ...] = ()
        elif args.path_to_json_file:
            partitions = parse_partitions_file(args.path_to_json_file)
        else:
            found = zk.get_topic_assignments([args.topic]).found.get(args.topic)
            if found is None:
                raise ElectionCommandError(f"Topic '{args.topic}' does not exist")
            numbers = [args.partition] if args.partition is not None else sorted(found.partitions)
            partitions = tuple(TopicPartition(args.topic, p) for p in numbers)
        address = controller_address(zk, args.controller_address)
    election = 0 if args.election_type == "preferred" else 1
    try:
        response = elect(address, election, partitions, 30_000)
    except grpc.RpcError as exc:
        raise ElectionCommandError(
            f"cannot reach the controller at {address}: {exc.code()}"
        ) from None
    text, ok = render_elections(response, args.election_type.upper())
    print(text)
    return 0 if ok else 1


def _zk(args: argparse.Namespace) -> int:
    with _zk_session(args.zk) as zk:
        client = zk.kazoo
        if args.action == "ls":
            print("\n".join(ls(client, args.path)))
        elif args.action == "get":
            print(get(client, args.path))
        else:
            print("\n".join(tree(client, args.path, args.depth)))
    return 0


def _reassign(args: argparse.Namespace) -> int:
    if args.action == "generate":
        source = args.topics_to_move_json_file
        topics = parse_topics_to_move(read_json_file(source), str(source))
        brokers = parse_broker_list(args.broker_list)
        with _zk_session(args.zk) as zk:
            current, proposed = generate(zk, topics, brokers)
        print(render_proposal(current, proposed))
        return 0
    source = args.reassignment_json_file
    requests = parse_reassignment(read_json_file(source), str(source))
    with _zk_session(args.zk) as zk:
        if args.action == "execute":
            print(render_started(execute(zk, requests)))
            return 0
        if args.wait is None:
            statuses = verify(zk, requests)
        else:
            statuses = wait_for_reassignment(
                lambda: verify(zk, requests), args.wait, _report_progress
            )
    print(render_verification(statuses))
    return verification_exit_code(statuses)


def _report_progress(complete: int, total: int) -> None:
    print(f"{complete} of {total} partitions reassigned", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    args = build_parser().parse_args(argv)
    if args.command == "cluster":
        return _cluster(args)
    if args.command == "elect-leaders":
        return _run(_elect, args)
    if args.command == "zk":
        return _run(_zk, args)
    if args.command == "reassign":
        return _run(_reassign, args)
    return _run(_topics, args)


if __name__ == "__main__":
    sys.exit(main())
