"""``Toolbox``: a class whose public methods become the tools of one configured instance."""

from __future__ import annotations

import inspect
from typing import ClassVar

from toolpacks.core._tool import Tool
from toolpacks.exceptions import ToolConflictError

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
        """The tools of this instance, in definition order (base classes first).

        A method overridden in a subclass gives the subclass's tool, in the base's place.

        Raises:
            ToolConflictError: Two methods give tools of the same name.
        """
        names: list[str] = []
        for klass in reversed(type(self).__mro__):
            if klass is object or klass is Toolbox or not issubclass(klass, Toolbox):
                continue
            names.extend(a for a in vars(klass) if not a.startswith("_") and a not in names)
        out: list[Tool] = []
        by_name: dict[str, str] = {}
        for attr in names:
            value = inspect.getattr_static(type(self), attr)  # the most derived definition
            if isinstance(value, Tool):
                made = value.__get__(self, type(self))
            elif inspect.isfunction(value):
                made = Tool(getattr(self, attr))
            else:
                continue
            if made.name in by_name:
                raise ToolConflictError(
                    f"toolbox {type(self).__name__}: methods {by_name[made.name]!r} and "
                    f"{attr!r} both define a tool named {made.name!r}; rename one with "
                    "@tool(name=...)"
                )
            by_name[made.name] = attr
            out.append(made)
        if self.toolbox_tags:
            out = [t.replace(tags=t.tags | self.toolbox_tags) for t in out]
        return out
