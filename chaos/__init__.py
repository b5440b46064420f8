"""Faults (kill, pause, partition, isolate from ZooKeeper), the workload and the run's
quick verdict. Not implemented yet: the foundation ships the cluster they will attack."""
