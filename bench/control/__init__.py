"""The control plane at scale: `python -m bench all` (`suite`: every measure in one run and
one table, on stages of their own, `stage`: a fresh chroot with its own broker fleet;
settle, restart, preferred election, profiling) and `python -m bench.failover`
(`failover`: the first election, then kill -9 of the controller, in `rounds`, explained by
`timeline` from the event logs), with `broker_failure`, `controlled_shutdown` and
`topic_creation`, one measure each. `kill` is a kill -9 of the controller and its row,
shared by `failover` and `spare` (the same failover with a new controller hosting no
replicas); `controller_work` runs the controller's own steps in-process in a child
process. A change counts as done when every live broker applied it (`applied`). The
cluster is synthetic (`layout`, pure) and loaded in multi-op transactions (`populate`);
the floors are timed on the same ensemble (`floor`: pipelined reads, fenced writes, a gRPC
round trip). `options` declares the failover's and the suite's options. Main thread.
"""
