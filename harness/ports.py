"""Free TCP ports on loopback, picked by the kernel, for servers a test or benchmark
starts. Any thread."""

from __future__ import annotations

import socket
from contextlib import ExitStack

HOST = "127.0.0.1"


def free_ports(count: int) -> list[int]:
    """Let the kernel pick ``count`` distinct free TCP ports on 127.0.0.1."""
    with ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((HOST, 0))
            ports.append(int(sock.getsockname()[1]))
        return ports
