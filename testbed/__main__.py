"""`testbed`: the command line of the testbed.

    testbed cluster [--zk HOSTS] [--wait-brokers N] [--timeout S]
    testbed topics create --topic T (--partitions N --replication-factor R | --replica-assignment A)
                          [--config K=V ...]
    testbed topics list
    testbed topics delete --topic T
    testbed topics describe [--topic T ...]

Exit codes: 0 success, 1 the cluster could not be reached or did not become ready,
2 bad arguments. Main thread.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from kazoo.client import KazooClient
from kazoo.handlers.threading import KazooTimeoutError

from controller.replica_assignment import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
)
from testbed.cluster_view import read_cluster, render
from testbed.topics import (
    TopicCommandError,
    create_topic,
    delete_topic,
    describe_topics,
    parse_configs,
    parse_replica_assignment,
    render_description,
)
from zkdata.client import KafkaZkClient
from zkdata.errors import TopicExistsError, ZnodeFormatError

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
    delete = topic_sub.add_parser(
        "delete",
        help="mark a topic for deletion",
        description="Mark a topic for deletion (writes /admin/delete_topics/T); the "
        "controller then deletes its partitions on every broker and its znodes.",
    )
    _add_zk(delete)
    delete.add_argument("--topic", required=True, help="the topic name")
    return parser


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
            described = describe_topics(zk, args.topic)
            print(render_description(described, set(zk.get_all_brokers().brokers)))
    return 0


USER_ERRORS = (
    TopicCommandError,
    TopicExistsError,
    InvalidTopicError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    InvalidReplicaAssignmentError,
    ZnodeFormatError,
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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    args = build_parser().parse_args(argv)
    if args.command == "cluster":
        return _cluster(args)
    return _run(_topics, args)


if __name__ == "__main__":
    sys.exit(main())
