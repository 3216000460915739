"""Hook implementations of the `langgraph` plugin, loaded from the ``agentdeck`` entry-point group.

Skeleton: the hooks land with this plugin's issue. Until then the module registers nothing, so
installing agentdeck-langgraph changes no behaviour.
"""
