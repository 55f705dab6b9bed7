"""``Toolbox``: a class whose public methods become the tools of one configured instance."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from toolpacks._tool import Tool

__all__ = ["Toolbox"]


class Toolbox:
    """Base class for a set of related tools sharing configuration.

    Every public method (not starting with ``_``) of a subclass becomes a tool bound to the
    instance; the constructor's arguments are the configuration (a database path, a root
    directory). Decorate a method with ``@tool(...)`` to give it options; undecorated
    methods take their name and description from the method itself.

    Example:
        >>> class Greeter(Toolbox):
        ...     def __init__(self, greeting: str) -> None:
        ...         self.greeting = greeting
        ...
        ...     def greet(self, name: str) -> str:
        ...         '''Greet someone.'''
        ...         return f"{self.greeting}, {name}!"
        >>> Greeter("Hello").tools()[0].name
        'greet'
    """

    toolbox_tags: ClassVar[frozenset[str]] = frozenset()
    """Tags added to every tool of the toolbox."""

    def tools(self) -> list[Tool]:
        """The tools of this instance, in definition order (base classes first)."""
        out: list[Tool] = []
        seen: set[str] = set()
        for klass in reversed(type(self).__mro__):
            if klass is object or klass is Toolbox or not issubclass(klass, Toolbox):
                continue
            for attr, value in vars(klass).items():
                if attr.startswith("_") or attr in seen:
                    continue
                if isinstance(value, Tool):
                    seen.add(attr)
                    out.append(value.__get__(self, type(self)))
                elif inspect.isfunction(value):
                    seen.add(attr)
                    bound = Tool(getattr(self, attr))
                    out.append(bound)
        if self.toolbox_tags:
            out = [t.replace(tags=t.tags | self.toolbox_tags) for t in out]
        by_name = {t.name: t for t in out}
        return [by_name[t.name] for t in out if by_name[t.name] is t]
