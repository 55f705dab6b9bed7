"""Adapters that hand a ``Toolset`` to agent frameworks (one optional extra each).

Each adapter lives in its own module, imports its framework only when used, and calls
``Toolset.call`` so every call passes the same gate, permissions, approvals and hooks.
"""
