"""Packs from llm plugins: ``[llm] plugins = [...]`` (entry point group ``llm``).

Installed llm tool plugins become packs of source ``llm``, imported only when a toolset uses
them; their functions, ``llm.Tool`` objects and toolboxes are wrapped as tools.
"""
