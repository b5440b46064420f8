"""`testbed`: the command line of the testbed.

    testbed cluster [--zk HOSTS] [--wait-brokers N] [--timeout S]
    testbed topics create --topic T (--partitions N --replication-factor R | --replica-assignment A)
                          [--config K=V ...] [--disable-rack-aware]
    testbed topics list
    testbed topics alter --topic T --partitions N [--replica-assignment A]
    testbed topics delete --topic T
    testbed topics describe [--topic T ...] [--under-replicated-partitions]
                            [--unavailable-partitions]
    testbed elect-leaders --election-type preferred|unclean
        (--all-topic-partitions | --topic T [--partition P] | --path-to-json-file F)
        [--controller-address HOST:PORT]
    testbed zk ls|get|tree [PATH] [--depth N]
    testbed reassign generate --topics-to-move-json-file F --broker-list 1,2,3
                              [--disable-rack-aware]
    testbed reassign execute --reassignment-json-file F
    testbed reassign verify --reassignment-json-file F [--wait S]
    testbed configs --entity-type topics [--entity-name T] --describe
    testbed configs --entity-type topics --entity-name T --alter
                    [--add-config K=V,K=V] [--delete-config K,K]

Every command takes `--zk HOSTS` (default `$ZK_CONNECT`, else the local ensemble). The
parser is built in `testbed.arguments`; this module runs each command's handler and maps
its outcome to the exit code.

Exit codes: 0 success, 1 the cluster could not be reached or did not become ready, or
the command failed (for `reassign verify`: a partition's reassignment failed), 2 bad
arguments, 3 (`reassign verify` only) some partitions are still being reassigned. Main
thread.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.handlers.threading import KazooTimeoutError

from admin import AdminError, RackAwareMode
from admin.topics import add_partitions, create_topic, delete_topic
from client import TransportError
from domain import TopicPartition
from security.secret_files import SecretFileError
from security.tls_files import TlsMaterialError, client_identity, tls_dir_choice
from security.zk_credentials import kazoo_options
from testbed.arguments import build_parser, zk_credentials, zk_tls
from testbed.cluster_view import read_cluster, render
from testbed.configs import (
    ConfigsCommandError,
    alter_config,
    describe_configs,
    parse_add_config,
    parse_delete_config,
    render_altered,
)
from testbed.configs import render_description as render_configs
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
    describe_topics,
    filter_partitions,
    parse_configs,
    parse_replica_assignment,
    render_added,
    render_description,
)
from testbed.zk_tree import ZkPathError, get, ls, tree
from zkdata.client import KafkaZkClient
from zkdata.errors import ZnodeFormatError
from zkdata.topic_configs import InvalidConfigError

__all__ = ["USER_ERRORS", "build_parser", "main"]


class _Unreachable(Exception):
    pass


@contextmanager
def _zk_session(args: argparse.Namespace, timeout_s: float = 10.0) -> Iterator[KafkaZkClient]:
    connect = args.zk
    options = kazoo_options(zk_credentials(args), zk_tls(args))
    client = KazooClient(hosts=connect, timeout=timeout_s, **options)
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
    with _zk_session(args) as zk:
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
                rack_aware=_rack_aware_mode(args),
            )
            print(f"Created topic {args.topic}.")
        elif args.action == "list":
            for topic in sorted(zk.get_all_topics()):
                print(topic)
        elif args.action == "alter":
            requested = (
                parse_replica_assignment(args.replica_assignment)
                if args.replica_assignment is not None
                else None
            )
            added = add_partitions(zk, args.topic, args.partitions, requested)
            print(render_added(args.topic, added))
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


def _rack_aware_mode(args: argparse.Namespace) -> RackAwareMode:
    return RackAwareMode.DISABLED if args.disable_rack_aware else RackAwareMode.ENFORCED


USER_ERRORS = (
    SecretFileError,
    TlsMaterialError,
    AdminError,
    ElectionCommandError,
    ZkPathError,
    TopicCommandError,
    ZnodeFormatError,
    ReassignCommandError,
    ConfigsCommandError,
    InvalidConfigError,
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
    except NoAuthError:
        print(
            "Error: ZooKeeper refused access (NoAuth): the cluster's znodes are secured; "
            "give its credentials with --zk-digest-file or ZK_DIGEST_FILE",
            file=sys.stderr,
        )
        return 1


def _cluster(args: argparse.Namespace) -> int:
    deadline = time.monotonic() + args.timeout
    credentials, tls = zk_credentials(args), zk_tls(args)
    while True:
        try:
            view = read_cluster(args.zk, min(10.0, args.timeout), credentials, tls)
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
    with _zk_session(args) as zk:
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
        tls = client_identity(tls_dir_choice(args.tls_dir))
    except TlsMaterialError as exc:
        raise ElectionCommandError(str(exc)) from None
    try:
        response = elect(address, election, partitions, 30_000, tls)
    except TransportError as exc:
        raise ElectionCommandError(
            f"cannot reach the controller at {address}: {exc.status}"
        ) from None
    text, ok = render_elections(response, args.election_type.upper())
    print(text)
    return 0 if ok else 1


def _zk(args: argparse.Namespace) -> int:
    with _zk_session(args) as zk:
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
        with _zk_session(args) as zk:
            current, proposed = generate(zk, topics, brokers, rack_aware=_rack_aware_mode(args))
        print(render_proposal(current, proposed))
        return 0
    source = args.reassignment_json_file
    requests = parse_reassignment(read_json_file(source), str(source))
    with _zk_session(args) as zk:
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


def _configs(args: argparse.Namespace) -> int:
    additions = parse_add_config(args.add_config)
    deletions = parse_delete_config(args.delete_config)
    if args.describe:
        if additions or deletions:
            raise ConfigsCommandError("--add-config and --delete-config need --alter")
        with _zk_session(args) as zk:
            described = describe_configs(zk, args.entity_name)
        for topic, config in described.items():
            print(render_configs(topic, config))
        return 0
    if args.entity_name is None:
        raise ConfigsCommandError("--alter needs --entity-name")
    if not additions and not deletions:
        raise ConfigsCommandError("--alter needs --add-config or --delete-config")
    with _zk_session(args) as zk:
        alter_config(zk, args.entity_name, additions, deletions)
    print(render_altered(args.entity_name))
    return 0


def _report_progress(complete: int, total: int) -> None:
    print(f"{complete} of {total} partitions reassigned", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    args = build_parser().parse_args(argv)
    if args.command == "cluster":
        return _run(_cluster, args)
    if args.command == "elect-leaders":
        return _run(_elect, args)
    if args.command == "zk":
        return _run(_zk, args)
    if args.command == "reassign":
        return _run(_reassign, args)
    if args.command == "configs":
        return _run(_configs, args)
    return _run(_topics, args)


if __name__ == "__main__":
    sys.exit(main())
