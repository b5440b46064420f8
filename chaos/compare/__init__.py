"""The comparison of two builds under the same faults (`python -m chaos compare`,
docs/chaos.md): `builds` stages a source (a git ref or a work tree) and builds its broker
image under a content tag; `command` runs the same seeded schedules on both builds, each
on a compose project of its own; `judgement` compares verdicts and recovery figures
(`ranks`: the Mann-Whitney rank test) and writes `summary.json`.
"""
