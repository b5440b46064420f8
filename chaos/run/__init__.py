"""The runner: one scenario performed on one cluster. `runner.run` sets the run up
(`setup`: topic, baseline snapshot, run directory), starts the workload, and lets
`step_loop` perform the schedule's cues on time through the `injector`, which proves
each fault took effect and was undone and keeps the `heal_state` that `python -m chaos
heal` reads after a killed run; `event_watch` fires the steps that wait for a node event,
`actions` performs the admin steps, and `live` keeps the terminal view. After the heal it
waits for convergence and writes the verdict. `testing` holds what the docker tier's
fault tests share (a fault's full injector cycle, a runner killed mid-fault, the heal).
"""
