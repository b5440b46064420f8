"""The command line's run commands: `commands` holds the handlers of `python -m chaos
list|run|all|replay|shrink`, `check` those of `python -m chaos check|export-history` (a
recorded run judged again, or its history for Jepsen, without a cluster), parsed in
`chaos.__main__` beside `heal` and `bugs` (`chaos.hunt.command`). The workload's own
command line is `chaos.workload`.
"""
