"""The `request` fault's proxy process: a gRPC relay (`rpc.wire.relay`) between the
controller and one broker that acts on the controller's requests as its plan says
(`chaos.faults.request_plan`) and appends one JSON line per request it acted on to its
record file (and its errors to the record file's name plus `.log`).

Started by `chaos.faults.request` with the project's own Python inside the controller's
network namespace:

    nsenter -t <pid> -n env PYTHONPATH=<repo> python -m chaos.faults.request_proxy \\
        --upstream 172.18.0.4:9092 --server-name broker2 --tls-dir .secrets/tls \\
        --record /tmp/.../f.jsonl --tag <project>.<fault id> --action duplicate ...

It serves on a loopback port the kernel picks; an iptables nat OUTPUT rule sends the
controller's connections to the broker there. With `--daemon` it forks before gRPC starts:
the parent prints `{"port": P, "pid": N}` once the child serves, and exits.

A record: `ts_ms`, `step` (`dropped`, `delayed`, `delivered` (the first of a duplicate),
`delivered-again`, `held`, `delivered-late` (a held request after the one that overtook
it, or after `hold_s`)), the request's `kind`, `controller_id`, `controller_epoch`,
`broker_epoch`, `partitions` and its first `leader_epochs` (`[topic, partition, epoch]`),
and for a delivery the broker's `answer`; a late delivery also names the partitions the
proxy had already delivered a newer or equal epoch of in a LeaderAndIsr (`stale`), those
the broker fenced (`fenced`) and those it did not (`unfenced`: a stale request obeyed).

Thread-safety: one asyncio loop on the main thread of its own process.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chaos.faults.request_plan import (
    Decider,
    Decision,
    DeletionSpan,
    RequestPlan,
    delivered_epochs,
    forget_deleted,
    parse_kinds,
    raced_deletion,
    stale_partitions,
)

if TYPE_CHECKING:
    from rpc.wire.relay import ControlSummary

#: Leader epochs kept per record (a failover's request lists every partition).
RECORDED_EPOCHS = 50
#: The kinds whose partitions a broker fences by leader epoch.
FENCED_KINDS = ("LeaderAndIsr", "StopReplica")


class Recorder:
    """Appends records to the record file, one flushed line each."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("a", encoding="utf-8")

    def add(self, step: str, summary: ControlSummary, **extra: Any) -> None:
        """One record of `step` on the request `summary` describes."""
        record = {
            "ts_ms": int(time.time() * 1000),
            "step": step,
            "kind": summary.kind,
            "controller_id": summary.controller_id,
            "controller_epoch": summary.controller_epoch,
            "broker_epoch": summary.broker_epoch,
            "partitions": len(summary.partitions),
            "leader_epochs": [list(p) for p in summary.partitions[:RECORDED_EPOCHS]],
            **extra,
        }
        self._file.write(json.dumps(record, sort_keys=True) + "\n")
        self._file.flush()


Forward = Callable[[bytes], Awaitable[bytes]]


class ProxyPolicy:
    """The relay's policy: the decider's choices carried out, each recorded."""

    def __init__(self, plan: RequestPlan, recorder: Recorder) -> None:
        self._plan = plan
        self._decider = Decider(plan)
        self._recorder = recorder
        self._delivered: dict[tuple[str, int], int] = {}
        self._deletions: dict[tuple[str, int], DeletionSpan] = {}
        self._held: dict[str, tuple[ControlSummary, bytes, Forward]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def control(self, summary: ControlSummary, body: bytes, forward: Forward) -> bytes:
        """Carry out the decision for one request (see `chaos.faults.request_plan`)."""
        from rpc.wire.relay import RelayDropped, empty_answer

        decision = self._decider.decide(summary.kind, ((t, p) for t, p, _ in summary.partitions))
        delay = self._plan.delay_ms / 1000
        if decision is Decision.DROP:
            self._recorder.add("dropped", summary)
            raise RelayDropped(summary.kind)
        if decision is Decision.DELAY:
            await asyncio.sleep(delay)
            return await self._deliver(summary, body, forward, "delayed")
        if decision is Decision.DUPLICATE:
            answer = await self._deliver(summary, body, forward, "delivered")
            self._later(delay, self._deliver(summary, body, forward, "delivered-again"))
            return answer
        if decision is Decision.HOLD:
            self._held[summary.kind] = (summary, body, forward)
            self._recorder.add("held", summary)
            self._later(self._plan.hold_s, self._release(summary.kind, None))
            return empty_answer(summary.kind)
        answer = await self._deliver(summary, body, forward, None)
        if decision is Decision.PASS_THEN_RELEASE:
            await self._release(summary.kind, summary)
        return answer

    async def _release(self, kind: str, overtaken_by: ControlSummary | None) -> None:
        """Deliver the held request of `kind` (after `overtaken_by`, or once the hold ran
        out: then only if the decider still holds it)."""
        if overtaken_by is None and not self._decider.release(kind):
            return
        held = self._held.pop(kind, None)
        if held is None:
            return
        summary, body, forward = held
        after = None if overtaken_by is None else overtaken_by.controller_epoch
        await self._deliver(summary, body, forward, "delivered-late", overtaken=after is not None)

    async def _deliver(
        self,
        summary: ControlSummary,
        body: bytes,
        forward: Forward,
        step: str | None,
        **extra: Any,
    ) -> bytes:
        """Send upstream; record it when `step` names it; remember the epochs delivered and
        forget those of the partitions a StopReplica deleted."""
        from rpc.wire.relay import UpstreamFailed, answer_errors

        stale = stale_partitions(summary.partitions, self._delivered)
        sent = time.monotonic()
        for tp in summary.deleted:
            self._deletions[tp] = (sent, None)
        try:
            answer = await forward(body)
        except UpstreamFailed as exc:
            for tp in summary.deleted:
                self._deletions[tp] = (sent, time.monotonic())
            if step is not None:
                self._recorder.add(step, summary, failed=f"{type(exc).__name__}: {exc}"[:300])
            raise
        answered = time.monotonic()
        for tp in summary.deleted:
            self._deletions[tp] = (sent, answered)
        self._delivered = delivered_epochs(self._delivered, summary.kind, summary.partitions)
        if step is None and not summary.deleted:
            return answer
        try:
            error, errors = answer_errors(summary.kind, answer)
        except ValueError:  # not the proxy's to judge: the controller reads the answer
            if step is not None:
                self._recorder.add(step, summary, answer="undecodable")
            return answer
        if summary.deleted and error == "NONE":
            gone = (tp for tp in summary.deleted if tp not in errors)
            self._delivered = forget_deleted(self._delivered, gone)
        if step is None:
            return answer
        late = step in ("delivered-again", "delivered-late")
        if late and summary.kind in FENCED_KINDS:
            raced = raced_deletion(stale, self._deletions, sent, answered)
            stale = [s for s in stale if s not in raced]
            fenced = [[t, p, errors[(t, p)]] for t, p, _ in stale if (t, p) in errors]
            whole = error != "NONE"  # the whole request refused (stale controller or broker epoch)
            unfenced = [] if whole else [[t, p, e] for t, p, e in stale if (t, p) not in errors]
            extra |= {"stale": [list(s) for s in stale], "fenced": fenced, "unfenced": unfenced}
            if raced:
                extra["raced_deletion"] = [list(s) for s in raced]
        self._recorder.add(step, summary, answer=error, **extra)
        return answer

    def _later(self, delay: float, work: Awaitable[object]) -> None:
        from rpc.wire.relay import UpstreamFailed

        async def run() -> None:
            await asyncio.sleep(delay)
            with contextlib.suppress(UpstreamFailed):  # recorded; the caller has its answer
                await work

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


async def _serve(args: argparse.Namespace, plan: RequestPlan, ready: int | None) -> None:
    from rpc.wire.relay import Relay
    from security.tls_files import load_identity

    identity = load_identity(Path(args.tls_dir), args.role)
    policy = ProxyPolicy(plan, Recorder(Path(args.record)))
    relay = Relay(args.upstream, args.server_name, identity, policy)
    port = await relay.start()
    announce = json.dumps({"port": port, "pid": os.getpid()}) + "\n"
    if ready is None:
        print(announce, end="", flush=True)
    else:
        os.write(ready, announce.encode())
        os.close(ready)
    await relay.wait()


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, (daemonize,) serve until SIGTERM."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--upstream", required=True, help="the broker's host:port")
    parser.add_argument("--server-name", required=True, help="the broker's name in its cert")
    parser.add_argument("--tls-dir", required=True)
    parser.add_argument("--role", default="broker", help="the certificate to present")
    parser.add_argument("--record", required=True)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--action", required=True)
    parser.add_argument("--kinds", default="all")
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--probability", type=float, default=1.0)
    parser.add_argument("--delay-ms", type=int, default=2000)
    parser.add_argument("--hold-s", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--daemon", action="store_true")
    args = parser.parse_args(argv)
    plan = RequestPlan(
        args.action, parse_kinds(args.kinds), args.count, args.probability,
        args.delay_ms, args.hold_s, args.seed,
    )  # fmt: skip
    ready = None
    if args.daemon:  # fork before gRPC starts any thread
        read_end, ready = os.pipe()
        if os.fork():
            os.close(ready)
            with os.fdopen(read_end) as pipe:
                line = pipe.readline()
            print(line, end="", flush=True)
            os._exit(0 if line else 1)
        os.close(read_end)
        os.setsid()
        os.dup2(os.open(os.devnull, os.O_RDWR), 0)
        os.dup2(os.open(os.devnull, os.O_RDWR), 1)
        log = os.open(f"{args.record}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(log, 2)  # the caller's pipes must close: it waits for their end
    try:
        asyncio.run(_serve(args, plan, ready))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
