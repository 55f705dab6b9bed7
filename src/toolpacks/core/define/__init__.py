"""Defining a tool: what a function becomes when ``@tool`` reads it.

``ToolDefinition`` (name, description, schemas, options, hooks, binding), the JSON Schema of a
signature and its docstring, hints and locks, provider-safe names, and hidden-character checks.
Nothing here runs a tool; ``core.call`` does, reading these definitions.
"""
