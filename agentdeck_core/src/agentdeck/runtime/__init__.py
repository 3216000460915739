"""The runtime: plays runs on engines and records every one of them in the event log.

It owns the run model's moving parts -- opening, playing, control at safe points, continuing a
suspended run, child runs, liveness -- and nothing of execution, which is the engines' business.
Each job is a module named for it; :class:`~agentdeck.runtime.runtime.Runtime` composes them
for one open deck. Only the run-id pool (:mod:`agentdeck.runtime.ids`) is process-wide, for the
reason given there.
"""
