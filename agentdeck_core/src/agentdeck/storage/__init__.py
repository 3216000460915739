"""What every event store needs from the core, so a store author writes only their backend.

The pieces here sit on the ports and the run model and are shared by the embedded stores, the
first-party store plugins and third-party stores alike, so a store gets the same checks,
refusals and wire formats by calling them rather than by re-writing them.
"""
