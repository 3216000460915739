"""The run model: what a run *is*, as data and pure functions, with no I/O.

The bottom layer of the core (above only :mod:`agentdeck.errors`). Content blocks, the event
envelope and its payloads, the status fold, what an ending hands back to a caller, time. Every
other layer reads these; nothing here imports a layer above it.
"""
