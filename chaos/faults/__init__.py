"""Faults as data with an undo, the nemesis. Every fault is a small frozen value that
knows how to start, how to prove it took effect, how to stop, and how to prove that
nothing of it is left (`chaos.faults.base.Fault`); `registry.FAULT_TYPES` holds every
fault type (its kind, targets, duration rule and params) and builds the fault a schedule
step names. The process faults (`process`, `zookeeper`) act through docker, the network
faults (`network`, `packets`, `latency`, `lost_reply`, `zk_reset`) inside the containers'
network namespaces, the resource faults (`resources`: `cpu-starve`, `memory-squeeze`)
through `docker update`, measured in the cgroup v1 files (`cgroup`). The injector
(`chaos.run.injector`) applies them, one at a time or overlapping, and records each step
in the run's `faults.jsonl`.

Nothing is imported here; import the concrete modules.
"""
