"""The generator: what a run does to the cluster and when, as data. A `Schedule`
(`schedule`) holds fault steps (`FaultSpec`s of the kinds in `chaos.faults.registry`,
started at a time or on a node event, healed before the end) and admin actions
(`action_kinds`); it is written to the run's `schedule.json` and read back for a replay.
`random_mix` draws a seeded schedule, `timeline` orders a schedule's cues for the runner,
`shrink` cuts a failing schedule down to the steps its failure needs, and `scenarios`
holds the runbook scenarios built from them. Everything here is pure and runs on any
thread.
"""
