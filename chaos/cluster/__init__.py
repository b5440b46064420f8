"""The cluster under test, seen from the host: `handle.ClusterHandle` drives one compose
project through docker and ZooKeeper (and is the `FaultTarget` faults act through);
`roles` parses the target roles a schedule names and `role_resolution` turns them into
services when a fault starts; `snapshots` reads every broker's view for the convergence
check; `endpoints` finds the published ports and TLS material; `project_lock` keeps two
runs off one project; `zk_off_loop` keeps ZooKeeper reads off the runner's loop;
`metrics_scrape` samples the brokers' metrics during a run; and `resources` sets and
reads a container's CPU and memory limits and finds its cgroup directories;
`container_exec` runs a command inside a container.
"""
