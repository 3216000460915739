"""The runtime: plays runs on engines and records every one of them in the event log.

It owns the run model's moving parts (opening, playing, control at safe points, continuing a
suspended run, child runs, liveness) and nothing of execution, which is the engines' business.
A deck constructs one runtime when it opens; nothing here is process-wide.
"""
