"""``Registry``: an explicit collection of tools (there is no hidden global one)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from toolpacks.core._tool import Tool
from toolpacks.exceptions import ToolConflictError, ToolNotFoundError

__all__ = ["Registry"]


class Registry:
    """Tools by scoped name; a subtool is held as ``parent.child``.

    Example:
        >>> from toolpacks import tool
        >>> @tool
        ... def ping() -> str:
        ...     '''Answer pong.'''
        ...     return "pong"
        >>> registry = Registry([ping])
        >>> registry.get("ping") is ping
        True
    """

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.add(item)

    def add(self, tool: Tool) -> Tool:
        """Add a tool and its subtools, each under its scoped name.

        Raises:
            TypeError: ``tool`` is not a ``Tool``.
            ToolConflictError: A name is already taken (nothing is added then).
        """
        if not isinstance(tool, Tool):
            raise TypeError(f"Expected Tool object, got {type(tool).__name__}: {tool!r}")
        entries = [(t.scoped_name, t) for t in tool.walk()]
        for name, _ in entries:
            if name in self._tools:
                raise ToolConflictError(
                    f"a tool named {name!r} is already registered; give one of them another "
                    "name with @tool(name=...)"
                )
        for name, item in entries:
            self._tools[name] = item
        return tool

    def get(self, name: str) -> Tool:
        """The tool registered under ``name``.

        Raises:
            ToolNotFoundError: No tool has that name; the message lists those that exist.
        """
        try:
            return self._tools[name]
        except KeyError:
            available = tuple(sorted(self._tools))
            raise ToolNotFoundError(
                f"no tool named {name!r}; available: {', '.join(available) or 'none'}",
                name=name,
                available=available,
            ) from None

    def remove(self, name: str) -> Tool:
        """Remove a tool and its subtools; returns the tool.

        Raises:
            ToolNotFoundError: No tool has that name.
        """
        found = self.get(name)
        for item in found.walk():
            self._tools.pop(item.scoped_name, None)
        return found

    def all(self) -> list[Tool]:
        """Every registered tool (subtools included), in registration order."""
        return list(self._tools.values())

    def definitions(self) -> list[dict[str, Any]]:
        """The ``doc_tree()`` of every root-level tool."""
        return [t.doc_tree() for t in self._tools.values() if t.parent is None]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)
