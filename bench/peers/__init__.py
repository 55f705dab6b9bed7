"""One adapter module per library measured side by side with toolpacks.

Each adapter module exposes the same small interface:

* ``LABEL`` (display name), ``DIST`` (distribution whose version is reported) and ``PATHS``
  (which documented API each measurement goes through, in words);
* ``define(fn)``: turn a plain function into the library's tool and return its JSON Schema;
* ``await build()`` (inside the running loop): an :class:`Adapter` for the small ``add`` tool,
  sync and async, whose coroutine functions invoke it from a model-style dict or a JSON string
  and return the raw result; ``value(result)`` extracts the number the tool returned (used to
  check every path once).

Modules import their library lazily (in the functions), so a library that failed to install
only disables its own rows.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

ADAPTERS = [
    "p_toolpacks",
    "p_pydantic_ai",
    "p_strands",
    "p_openai_agents",
    "p_fastmcp",
    "p_langchain",
]


@dataclass
class Adapter:
    """The invocation paths of one library for the ``add`` tool."""

    async_dict: Callable[[dict[str, Any]], Awaitable[Any]]
    async_json: Callable[[str], Awaitable[Any]]
    sync_dict: Callable[[dict[str, Any]], Awaitable[Any]]
    sync_json: Callable[[str], Awaitable[Any]]
    value: Callable[[Any], Any]
    notes: dict[str, str] = field(default_factory=dict)


def load(name: str) -> Any:
    return importlib.import_module(f"peers.{name}")
