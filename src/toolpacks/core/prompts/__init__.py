"""Prompts and resources a pack offers beside its tools (MCP ``prompts/*`` and ``resources/*``).

``Prompt`` and ``Resource`` are what a pack registers (``register_prompts``,
``register_resources``); ``Catalog`` is what one toolset offers of them, answering listing,
getting, reading, completion and subscriptions as MCP-shaped dicts for every road.
"""
