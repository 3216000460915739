"""Fails at import on purpose, as a plugin with a missing dependency would."""

raise RuntimeError("adk-broken-fixture fails at import on purpose")
