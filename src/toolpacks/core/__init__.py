"""The core layer: a tool and everything one call of it needs.

Two rooms: ``define`` (what a tool is: definitions, schemas from signatures, docstrings,
hints, names) and ``call`` (one call: its plan, the argument gate, running, outcomes). The
values both use sit here (results, contexts, hooks, argument and kind checks, secrets), and so
do ``Tool``, ``@tool``, ``Toolbox`` and ``Registry``, which join the two. Core imports nothing
from the other layers; they all build on it.
"""
