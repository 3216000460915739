"""The plugin system: the hooks a plugin implements (:mod:`.hookspecs`), the host that
loads plugins through the ``agentdeck`` entry-point group and keeps attributed registries
(:mod:`.host`), and the check a plugin makes before using an optional dependency it ships as an
extra (:mod:`.extras`). The core's own defaults register through the same path as any plugin.
"""
