"""The packs layer: where tools come from, one sub-package per source.

``entrypoints`` (installed distributions, discovered without importing them), ``mcp`` (remote
MCP servers mounted as packs) and ``llm`` (llm tool plugins), with what every source shares
beside them: the pack record (``_record``) and trust in configuration files (``_trust``). It
builds on ``core`` and ``filetools``; the host builds on it and sees only packs.
"""
