"""`python -m broker_node`: run one broker until SIGTERM or SIGINT.

The process may be PID 1 in its container: it installs its own SIGTERM handler, stops
cleanly (closing the ZooKeeper session so its ephemeral znodes vanish at once) and exits 0.
Once the broker has stopped and its logs are flushed, the process ends at once
(`os._exit`) instead of tearing down its heap object by object, which took about a second
of a controlled shutdown at 10,000 partitions.
Exit 2: bad configuration. Exit 1: could not start. With TLS configured and gRPC's
`handshaker` tracer off, it first starts itself again (same pid, `execve`) with the tracer
on, so that refused handshakes reach the event log (`rpc.wire.handshake_trace`). Main thread.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from broker_node.config import load_config, trace_environment
from broker_node.node import BrokerNode
from controller import collector
from zkdata.errors import BrokerIdInUseError


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the configuration, start the broker, wait for a stop signal."""
    config = load_config(argv)
    traced = trace_environment(config)
    if traced is not None:  # gRPC reads its tracer settings once, when it is imported
        args = list(sys.argv[1:] if argv is None else argv)
        os.execve(sys.executable, [sys.executable, "-m", "broker_node", *args], traced)
    logging.basicConfig(
        level=logging.INFO,
        format=f"%(asctime)s {config.node_name} %(threadName)s %(levelname)s %(name)s: %(message)s",
    )
    # the controller's event thread and kazoo's connection thread mostly wait on I/O; at
    # Python's default interval a fetch thread busy with 10,000 partitions holds the GIL
    # 5 ms at a time before either may run
    sys.setswitchinterval(config.gil_switch_interval_us / 1_000_000)
    # the older generations keep Python's ratios; at the default young threshold, applying
    # a LeaderAndIsr of 10,000 new partitions spent a third of its time collecting
    _young, older, oldest = gc.get_threshold()
    gc.set_threshold(config.gc_young_threshold, older, oldest)
    collector.set_pausing(config.gc_pause_during_changes)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        logging.getLogger("broker_node").info("received %s, stopping", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    node = BrokerNode(config)
    try:
        node.start()
    except BrokerIdInUseError as exc:
        logging.getLogger("broker_node").error("cannot register: %s", exc)
        node.stop()
        return 1
    except Exception:
        logging.getLogger("broker_node").exception("start-up failed")
        node.stop()
        return 1
    logging.getLogger("broker_node").info(
        "broker %d serving on port %d, broker epoch %d",
        config.broker_id,
        node.port,
        node.broker_epoch,
    )
    while not stop.wait(1.0):
        pass
    node.stop()
    return 0


def _exit_now(code: int) -> None:
    """End the process with `code` once everything it wrote is flushed."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _exit_now(main())
