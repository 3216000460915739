"""The plugin system: the hooks a plugin implements, and the host that loads plugins through the
``agentdeck`` entry-point group and keeps attributed registries. The core's own defaults
register through the same path as any plugin.

* :mod:`.hookspecs` -- the hooks and their ``register`` types: the plugin author's contract;
* :mod:`.host` -- :class:`~.host.PluginHost` and its typed lookups; the import path callers use;
* :mod:`.loading` -- finding plugins and loading each one in isolation;
* :mod:`.registry` -- what can be registered, by whom, and the checking ``register`` callbacks;
* :mod:`.listing` -- the records ``agentdeck plugins`` prints;
* :mod:`.urls` -- scheme-shaped URLs;
* :mod:`.extras` -- the check a plugin makes before using an optional dependency it ships as an
  extra.
"""
