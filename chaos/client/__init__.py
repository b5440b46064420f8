"""The workload client: producers that send numbered values through the brokers' gRPC
ClientApi and a consumer that polls them back (`producer`, `consumer`), each operation
written to the run's history; `workload_run` runs them on their own threads for a
duration, takes the final read and asks the history checker for a verdict. The command
line over it is `chaos.workload` (`python -m chaos.workload`).
"""
