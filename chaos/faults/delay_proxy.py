"""A TCP proxy that delays what passes through it: the latency fault's mechanism.

Started by `chaos.faults.latency` with the host's Python inside a container's network
namespace (`nsenter -t <pid> -n python delay_proxy.py ...`). It listens on a loopback port
the kernel picks; an iptables nat OUTPUT rule redirects the container's new connections
to the chosen peers to it. For each accepted connection it reads the original destination
(`SO_ORIGINAL_DST`), connects there with a socket marked `--mark` (the redirect rule skips
marked sockets, so the proxy does not loop into itself), and forwards: every chunk the
container sends is held `--delay-ms` before it goes on (order kept); replies pass at once.
So a request/response round trip grows by the delay, like a delay on the container's
egress.

With `--daemon` it forks once it listens: the parent prints `{"port": P, "pid": N}` and
exits, the child serves until SIGTERM. `--tag` carries the fault id, only so that the
fault finds its proxy among the host's processes.

Standard library only (it runs outside the project's environment).

Thread-safety: one asyncio loop on the main thread of its own process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import struct
import sys

SO_ORIGINAL_DST = 80
SO_MARK = 36
CHUNK = 65536


def original_destination(sock: socket.socket) -> tuple[str, int]:
    """Where a redirected connection was going (IPv4 `sockaddr_in`)."""
    raw = sock.getsockopt(socket.SOL_IP, SO_ORIGINAL_DST, 16)
    port = struct.unpack("!H", raw[2:4])[0]
    return socket.inet_ntoa(raw[4:8]), port


async def _delayed(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float
) -> None:
    """Copy reader to writer, each chunk `delay` seconds after it was read."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def send() -> None:
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            writer.write(data)
            await writer.drain()

    sender = asyncio.create_task(send())
    try:
        while True:
            data = await reader.read(CHUNK)
            queue.put_nowait((loop.time() + delay, data))
            if not data:
                break
        await sender
    finally:
        sender.cancel()


async def _plain(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy reader to writer as it comes."""
    while data := await reader.read(CHUNK):
        writer.write(data)
        await writer.drain()
    if writer.can_write_eof():
        writer.write_eof()


async def _serve_one(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float, mark: int
) -> None:
    client = writer.get_extra_info("socket")
    upstream_writer = None
    try:
        host, port = original_destination(client)
        upstream = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        upstream.setsockopt(socket.SOL_SOCKET, SO_MARK, mark)
        upstream.setblocking(False)
        await asyncio.get_running_loop().sock_connect(upstream, (host, port))
        up_reader, upstream_writer = await asyncio.open_connection(sock=upstream)
        await asyncio.gather(_delayed(reader, upstream_writer, delay), _plain(up_reader, writer))
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        for w in (writer, upstream_writer):
            if w is not None:
                w.close()


async def _main(server_socket: socket.socket, delay: float, mark: int) -> None:
    server = await asyncio.start_server(
        lambda r, w: _serve_one(r, w, delay, mark), sock=server_socket
    )
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, listen, (daemonize,) serve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0: the kernel picks")
    parser.add_argument("--delay-ms", type=float, required=True)
    parser.add_argument("--mark", type=lambda s: int(s, 0), required=True)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--daemon", action="store_true")
    args = parser.parse_args(argv)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(128)
    if args.daemon:
        child = os.fork()
        if child:
            print(json.dumps({"port": listener.getsockname()[1], "pid": child}), flush=True)
            os._exit(0)
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
    else:
        print(json.dumps({"port": listener.getsockname()[1], "pid": os.getpid()}), flush=True)
    try:
        asyncio.run(_main(listener, args.delay_ms / 1000, args.mark))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
