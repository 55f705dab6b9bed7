"""Calling a tool: one call, from the arguments a model sent to a ``ToolResult``.

A call walks straight: its plan (``_plan``, built once per tool on the first call), then
parse → check → validate (``_gate``) → authorize → run (``_run``, ``_generators``, ``_sync``)
→ outcome (``_outcome``). ``_invoke`` is that walk, with a short path for plain tools.
"""
