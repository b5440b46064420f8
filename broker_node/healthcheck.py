"""`python -m broker_node.healthcheck`: exit 0 when this container's broker is registered
in ZooKeeper (its health file exists) and its gRPC port accepts connections.
Runs as its own short process, on its main thread."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path


def main() -> int:
    """Check the health file and the port it names."""
    path = Path(os.environ.get("HEALTH_FILE", "/tmp/broker.health"))
    try:
        port = path.read_text().split()[2]
        with socket.create_connection(("127.0.0.1", int(port)), timeout=2):
            return 0
    except (OSError, ValueError):
        return 1


if __name__ == "__main__":
    sys.exit(main())
