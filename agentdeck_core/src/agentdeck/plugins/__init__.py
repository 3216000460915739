"""The plugin system: the hooks a plugin implements (:mod:`.hookspecs`) and the host that
loads plugins through the ``agentdeck`` entry-point group and keeps attributed registries
(:mod:`.host`). The core's own defaults register through the same path as any plugin.
"""
