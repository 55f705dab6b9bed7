"""The host layer: configuration, and a toolset per agent.

``Host`` reads configuration and assembles toolsets from packs (namespacing, tag filters,
conflict policies, permissions, approvals); ``Toolset`` exports definitions and dispatches
model tool calls. Builds on ``core``, ``packs``, ``filetools`` and ``export``.
"""
