"""The bug hunt (`python -m chaos bugs`): for each historical bug switch, `plan` names the
scenarios and the invariant expected to catch it, `builds` brings up a compose project
with the switch on, `hunt` runs the plan's seeds until the invariant fails and shrinks
the failing schedule, `report` writes the summary table, and `command` is the
subcommand's argument handling.
"""
