"""Hook implementations of the `http` plugin, loaded from the ``agentdeck`` entry-point group.

Skeleton: the hooks land with this plugin's issue. Until then the module registers nothing, so
installing agentdeck-http changes no behaviour.
"""
