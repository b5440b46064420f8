"""Faults as data with an undo. Every fault is a small frozen value that knows how to
start, how to prove it took effect, how to stop, and how to prove that nothing of it is
left (`chaos.faults.base.Fault`). The injector (`chaos.injector`) applies them, one at a
time or overlapping, and records each step in the run's `faults.jsonl`.

Nothing is imported here; import the concrete modules.
"""
