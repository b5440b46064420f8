"""The history checker's benchmark (`python -m bench.checker`, `measure`): the checker
(`rundir.checker.check_files`, judging the files as it reads them, the final read rebuilt
from its process's file) over a generated workload history of a million operations,
against a plain pass that only decodes the same lines as a stream, each in a child
process whose peak memory is measured. The histories come from
`generator`, a seeded generator written by the workload's own history writer; `options`
declares the command line and `phase` is what each child process runs. Main thread.
"""
