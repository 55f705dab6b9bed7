"""File-based tools: a ``TOOL.md`` with YAML front matter plus a ``handler.py``, as a pack source.

Builds on ``core`` only; packs (a pack may register a tools directory) and the host's
``[files]`` table use it.
"""
