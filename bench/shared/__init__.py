"""What every benchmark family uses. `settings` holds `Settings`, the one frozen settings
type, generic over a family's options; `arguments` the options every benchmark shares
(`--partitions`, `--quick`, `--out`...), declared once, and `Command`, in which a family
declares its own; `runner` sets up the ensemble and the broker fleet (`fleet`: the broker
processes and their event logs, waited on with deadlines; `cluster_ready`: brokers and a
topic's ISRs complete), runs a benchmark's measures, tears down whatever happens
(`stopping`: SIGTERM and Ctrl-C) and writes the results; `report` turns measures into rows
(figure, floor, ratio), the table, `bench.json` and the JSON lines in `bench/results/`,
drawn by `plot`; `machine` says what a run happened on, `usage` how much CPU each process
and the box used, `profiling` takes py-spy flame graphs, `console` prints progress. Main
thread.
"""
