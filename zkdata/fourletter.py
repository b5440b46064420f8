"""ZooKeeper's four-letter words over a plain socket (`srvr`, `ruok`, `mntr`). Blocks the
calling thread up to `timeout_s`."""

from __future__ import annotations

import socket


def four_letter_word(host: str, port: int, word: str, timeout_s: float = 2.0) -> str:
    """Send `word` and return the whole reply; raises OSError if unreachable."""
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(word.encode("ascii"))
        chunks = []
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def server_mode(host: str, port: int, timeout_s: float = 2.0) -> str:
    """`leader`, `follower`, `standalone`, `not serving` or `unreachable`."""
    try:
        reply = four_letter_word(host, port, "srvr", timeout_s)
    except OSError:
        return "unreachable"
    for line in reply.splitlines():
        if line.startswith("Mode:"):
            return line.split(":", 1)[1].strip()
    return "not serving"
