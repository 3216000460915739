"""What a user declares: agents, tools, workflows, skills, MCP servers, context, the catalog.

Declarations are data checked without any engine SDK: an engine plugin compiles them when a
deck builds. Nothing here starts a run or touches a store.
"""
