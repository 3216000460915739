"""What leaves a run for someone watching it: observer fan-out, views, traces, metrics.

Everything here reads canonical events and nothing else. The runtime feeds the hub
(:mod:`.hub`); exporters in plugins render traces with :mod:`.tracing` under the content-capture
policy of :mod:`.capture`; :mod:`.views` chooses which events an observer receives.
"""
