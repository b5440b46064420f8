"""The history checker's benchmark (`python -m bench.checker`, `measure`): the checker
(`rundir.checker.check` with the final read rebuilt from the history) over a generated
workload history of a million operations, against a plain pass that only decodes the same
lines, each in a child process whose peak memory is measured. The histories come from
`generator`, a seeded generator written by the workload's own history writer; `options`
declares the command line and `phase` is what each child process runs. Main thread.
"""
