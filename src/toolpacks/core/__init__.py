"""The core layer: a tool and everything one call of it needs.

Defining (``@tool``, schemas from signatures, docstrings, toolboxes, the registry), the
argument gate every call passes, running (hooks, lock, timeout, threads) and results. It
imports nothing from the other layers; they all build on it.
"""
