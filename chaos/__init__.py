"""Faults (kill, pause, partition, isolate from ZooKeeper), their schedules, the workload
and the run's verdict, in the shape of Jepsen's generator / nemesis / client / db / runner
(docs/chaos.md):

- `generator/`: schedules as data (fault steps and admin actions at times, on roles,
  healed before the end), `schedule.json`, the seeded random mix, the timeline of cues,
  shrinking, and the runbook `scenarios/`.
- `faults/`: the fault contract and every fault type in one registry (`registry`): its
  kind, targets, duration rule and params, each fault with measured checks and an undo.
- `client/`: the workload's producers and consumer over the brokers' gRPC ClientApi, and
  a workload run with its history and verdict.
- `cluster/`: the compose project seen from the host (`ClusterHandle`), target roles and
  their resolution, cluster snapshots, endpoints, the project lock.
- `run/`: the runner, its step loop, the injector and its heal state, triggers, admin
  actions and the live view.
- `hunt/`: the bug hunt over the historical bug switches (builds, plans, hunt, report).
- `compare/`: two builds (git refs or work trees) under the same seeded faults, their
  verdicts and recovery figures compared (builds, command, judgement, ranks).
- `cli/` and `__main__`: `python -m chaos run|list|all|replay|shrink|heal|bugs|compare`;
  `workload`: the workload's command line, `python -m chaos.workload`.
- `errors`: the error root. `testing`: test doubles (an in-process cluster, a recording
  history, a fake clock).

The run directory it writes, the workload history, its checker and the cluster
invariants live below it, in `rundir` (docs/runs.md, docs/invariants.md).

Every error chaos raises derives from `ChaosError` (`chaos.errors`):

    ChaosError
    ├── ScheduleError (a ValueError)           chaos.errors
    │   ├── UnknownKind                        a kind no registry holds
    │   ├── UnknownRole                        a role outside the grammar or the kind's
    │   ├── BadParams                          a param unknown or out of range
    │   ├── BadTiming                          negative, unsorted, past the heal
    │   └── ScheduleFormatError                a `schedule.json` that does not read
    ├── FaultError                             chaos.errors
    │   ├── ForeignContainer                   not the run's compose project
    │   ├── UnknownTarget                      no such service or role
    │   ├── FaultFailed                        the mechanism failed (docker, iptables, tc)
    │   ├── BadFaultData                       chaos.faults.fields: a description that
    │   │                                      does not rebuild a fault
    │   └── GrudgeError (a ValueError)         chaos.faults.grudge: a grudge not built
    ├── PollFailed (a client.errors.ClientError)  chaos.client.consumer
    ├── ProjectBusy                            chaos.cluster.project_lock
    ├── RunSetupError                          chaos.run.setup: the run cannot start
    │   ├── NeedsDiskLayers                    chaos.run.setup: disk faults, and the
    │   │                                      brokers have no disk layers
    │   └── BuildError                         chaos.compare.builds: a source that
    │                                          does not stage or build
    ├── HealStateError                         chaos.run.heal_state: unreadable state
    ├── ActionFailed                           chaos.run.actions: an admin step failed
    ├── FilesUnread                            chaos.run.audit_files: a stopped broker's
    │                                          log files could not be read
    ├── UsageError                             chaos.cli.commands: bad command line
    ├── MissingDescription (a ValueError)      chaos.cli.scenarios_doc: a registry name
    │                                          docs/scenarios.md does not describe
    ├── HuntUsageError                         chaos.hunt.command: bad `bugs` arguments
    └── CompareUsageError                      chaos.compare.command: bad `compare` arguments

Nothing is imported here, so that `python -m chaos.workload` runs its module only once.
"""
