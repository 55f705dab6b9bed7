"""The packs layer: where tools come from.

Discovery of installed pack distributions (entry point group ``toolpacks``) without importing
them, loading a pack through pluggy with its failures reported, remote MCP servers mounted as
packs, pinning and trust. It builds on ``core`` and ``filetools``; the host builds on it.
"""
