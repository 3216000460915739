"""Render the canonical event stream as trace spans, for every exporter to share.

One run is one trace. The run's root span covers ``run.started`` to its terminal event; model
calls become generations, tool calls tool spans, interrupts and pauses spans covering the wait,
and decisions, reports and control requests instantaneous events. A nested run (its events carry
``parent_run_id``) is placed under its parent's root, in its parent's trace.

The rendering is pure and knows no telemetry SDK. Each exporter (the Langfuse and OpenTelemetry
plugins, or yours) feeds events to a :class:`~.renderer.TraceRenderer` and maps the records it
returns onto its own SDK; none of them re-derives the tree, which is why an agent turn and a
workflow run are traced by the same code. What a record may contain is decided by the
:class:`~agentdeck.observing.capture.ContentPolicy` the renderer was built with; exporters add
nothing from the events themselves.

The modules, from what an exporter reads to how it is made:

* :mod:`.spans` — what the renderer hands an exporter: :class:`~.spans.SpanRecord` (a finished
  span) and :class:`~.spans.SpanStarted` (a run's root, announced when the run starts);
* :mod:`.attributes` — the attribute keys a record carries, one constant each;
* :mod:`.ids` — trace and span ids derived from run ids, the same in every process;
* :mod:`.renderer` — :class:`~.renderer.TraceRenderer`: which runs are open, where each is
  placed in its trace, and how it ends;
* :mod:`.run_spans` — one run's open spans and how a finished one becomes a record;
* :mod:`.event_spans` — what one event does to its run's spans.
"""
