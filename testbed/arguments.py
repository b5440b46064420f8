"""The argument parser of the `testbed` command line: every subcommand with its options,
defaults (`--zk` falls back to `ZK_CONNECT`, then the local ensemble; `--zk-digest-file`
to `ZK_DIGEST_FILE`, then, for the local ensemble only, the repository's
`.secrets/zk-digest`) and argument types. `__main__` parses with it and dispatches.
Building and parsing run on the CLI's main thread."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from security.tls_files import tls_dir_choice
from security.zk_credentials import ZkDigestCredentials, repo_digest_file
from security.zk_credentials import load as load_zk_credentials
from security.zk_tls import ZkTls, repo_zk_tls, zk_tls_choice

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
        help="create, list, describe, alter and delete topics",
        description="Create, list, describe, alter (add partitions) and delete topics (like "
        "kafka-topics.sh --zookeeper).",
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
    _add_disable_rack_aware(create)
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
    alter = topic_sub.add_parser(
        "alter",
        help="add partitions to a topic",
        description="Add partitions to a topic (like kafka-topics.sh --alter --partitions): "
        "rewrites /brokers/topics/T with the new partitions; the controller creates them. "
        "Records with a key may map to a different partition afterwards.",
    )
    _add_zk(alter)
    alter.add_argument("--topic", required=True, help="the topic name")
    alter.add_argument(
        "--partitions",
        type=int,
        required=True,
        metavar="N",
        help="the new partition count, larger than the current one",
    )
    alter.add_argument(
        "--replica-assignment",
        help="replicas of every partition, as for create (1:2,2:3); entries for existing "
        "partitions are ignored",
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
        "--tls-dir",
        default=os.environ.get("TLS_DIR"),
        help="call the controller over mutual TLS with the client certificate in this "
        "directory (TLS_DIR; default .secrets/tls when it exists; 'off': plaintext)",
    )
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
    _add_configs(sub)
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
        "--broker-list (Kafka's assignment, rack-aware when every listed broker registered a "
        "rack; same partitions and replication factor). Nothing is written.",
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
    _add_disable_rack_aware(proposal)
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


def _add_configs(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    configs = sub.add_parser(
        "configs",
        help="describe and alter topic config overrides",
        description="Describe and alter topic config overrides (like kafka-configs.sh "
        "--zookeeper): --alter rewrites /config/topics/T and announces the change under "
        "/config/changes for the brokers. Only topics: Kafka's other entity types (brokers, "
        "users, clients, ips) are not supported.",
    )
    _add_zk(configs)
    configs.add_argument(
        "--entity-type",
        required=True,
        choices=["topics"],
        help="the kind of entity; only topics is supported",
    )
    configs.add_argument(
        "--entity-name",
        metavar="T",
        help="the topic; with --describe it may be left out to describe every topic",
    )
    what = configs.add_mutually_exclusive_group(required=True)
    what.add_argument("--describe", action="store_true", help="print the overrides")
    what.add_argument(
        "--alter", action="store_true", help="add or delete overrides of --entity-name"
    )
    configs.add_argument(
        "--add-config",
        action="append",
        default=[],
        metavar="K=V,K=V",
        help="overrides to set with --alter, comma-separated (repeatable; values cannot "
        "contain ',')",
    )
    configs.add_argument(
        "--delete-config",
        action="append",
        default=[],
        metavar="K,K",
        help="overrides to remove with --alter, comma-separated (repeatable); each must be set",
    )


def _add_zk(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--zk",
        default=os.environ.get("ZK_CONNECT", DEFAULT_ZK),
        help=f"ZooKeeper connect string (ZK_CONNECT, default {DEFAULT_ZK})",
    )
    parser.add_argument(
        "--zk-digest-file",
        type=Path,
        default=os.environ.get("ZK_DIGEST_FILE") or None,
        metavar="FILE",
        help="the cluster's ZooKeeper credentials, <user>:<password> (ZK_DIGEST_FILE; "
        "default for the local ensemble: .secrets/zk-digest when `make setup` made it)",
    )
    parser.add_argument(
        "--zk-tls-dir",
        default=os.environ.get("ZK_TLS_DIR") or None,
        metavar="DIR",
        help="connect to ZooKeeper over TLS with the CA and client certificate in DIR "
        "(ZK_TLS_DIR; default for the local ensemble: .secrets/tls when it exists; "
        "'off': plaintext)",
    )


def zk_credentials(args: argparse.Namespace) -> ZkDigestCredentials | None:
    """The credentials a command authenticates with: `--zk-digest-file`, else the
    repository's `.secrets/zk-digest` when `--zk` is the local compose ensemble, else none.
    `SecretFileError` when the file is unusable."""
    path: Path | None = args.zk_digest_file
    if path is None and args.zk == DEFAULT_ZK:
        path = repo_digest_file()
    return None if path is None else load_zk_credentials(path)


def zk_tls(args: argparse.Namespace) -> ZkTls | None:
    """The TLS a command connects to ZooKeeper with: `--zk-tls-dir`, else the repository's
    `.secrets/tls` when `--zk` is the local compose ensemble, else plaintext.
    `TlsMaterialError` when a file is unreadable."""
    raw: str | None = args.zk_tls_dir
    if raw is None or not raw.strip():
        found = repo_zk_tls() if args.zk == DEFAULT_ZK else None
        return found.check() if found is not None else None
    return zk_tls_choice(tls_dir_choice(raw))


def _add_disable_rack_aware(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--disable-rack-aware",
        action="store_true",
        help="assign replicas without the brokers' racks (needed when only some brokers "
        "registered one)",
    )
