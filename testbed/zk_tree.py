"""`testbed zk`: a read-only view of the ZooKeeper tree (ls, get with the znode's Stat, a
recursive tree). Blocks the calling thread."""

from __future__ import annotations

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError


class ZkPathError(Exception):
    """The path does not exist; the message is for the user."""


def ls(client: KazooClient, path: str) -> list[str]:
    """Children of `path`, sorted."""
    try:
        return sorted(client.get_children(path))
    except NoNodeError:
        raise ZkPathError(f"{path} does not exist") from None


def get(client: KazooClient, path: str) -> str:
    """The data of `path` (decoded if UTF-8) and its Stat fields Kafka cares about."""
    try:
        data, stat = client.get(path)
    except NoNodeError:
        raise ZkPathError(f"{path} does not exist") from None
    try:
        text = data.decode("utf-8") if data else ""
    except UnicodeDecodeError:
        text = repr(data)
    return (
        f"{text}\n"
        f"czxid = {stat.czxid}\nmzxid = {stat.mzxid}\nversion = {stat.version}\n"
        f"ephemeralOwner = 0x{stat.ephemeralOwner:x}\nnumChildren = {stat.numChildren}"
    )


def tree(client: KazooClient, path: str = "/", depth: int = 4) -> list[str]:
    """An indented listing of the subtree, `depth` levels deep; each level's children are
    read pipelined."""
    if not client.exists(path):
        raise ZkPathError(f"{path} does not exist")
    children: dict[str, list[str]] = {}
    level = [path]
    for _ in range(depth):
        pending = [(p, client.get_children_async(p)) for p in level]
        level = []
        for parent, result in pending:
            try:
                names = sorted(result.get())
            except NoNodeError:
                names = []
            children[parent] = names
            level += [f"{parent.rstrip('/')}/{name}" for name in names]
    lines: list[str] = []

    def walk(node: str, indent: int) -> None:
        name = node if indent == 0 else node.rsplit("/", 1)[1]
        lines.append("  " * indent + name)
        for child in children.get(node, []):
            walk(f"{node.rstrip('/')}/{child}", indent + 1)

    walk(path, 0)
    return lines
