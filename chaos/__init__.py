"""Faults (kill, pause, partition, isolate from ZooKeeper), their schedules, the workload
and the run's verdict.

The fault side (docs/chaos.md):

- `faults/`: the fault contract and the fault kinds, each with measured checks.
- `cluster`: `ClusterHandle`, one compose project through docker and ZooKeeper.
- `role_resolution`: target roles (`controller`, `zk-leader`, ...) resolved to services.
- `injector`, `heal_state`: faults started, proven, stopped, recorded for healing.
- `__main__`: `python -m chaos heal`.

The workload side:

- `history`: the operation history (invoke / ok / fail / info per operation), its JSON-lines
  schema, writer and reader.
- `checker` (results in `verdict`): pure checks over a history and its final read: lost
  acknowledged writes, duplicates, reordering, unexpected values and more.
- `producer`, `consumer`: the workload client over the brokers' gRPC ClientApi.
- `workload_run`: a run: producer and consumer threads, the final read, the verdict.
- `workload`: the command line (`python -m chaos.workload`).
- `invariants`: the cluster invariants over every node's event log, the history and cluster
  snapshots, and the run's verdict (docs/invariants.md).
- `testing`: test doubles (an in-process cluster, a recording history, a fake clock).
- `schedule`, `kinds`, `roles`, `schedule_errors`: schedules as data (faults and actions at
  times, on roles, healed before the end), `schedule.json`, the seeded random mix.
- `timeline`: the order in which a runner performs a schedule's starts, stops and actions.
- `shrink`: delta debugging of a failing schedule down to the steps the failure needs.
- `scenarios`: the runbook scenarios (`SCENARIOS`), see docs/scenarios.md.

Nothing is imported here, so that `python -m chaos.workload` runs its module only once.
"""
