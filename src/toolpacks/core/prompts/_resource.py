"""A resource: data a client reads by URI, static or templated, and the ``@resource`` decorator.

A static resource has a plain ``uri``; a templated one has ``{name}`` parameters in it
(``test://template/{id}/data``), matched segment by segment and passed to its function as
keywords. The function returns ``str`` (text), ``bytes`` (a blob), an ``EmbeddedResource``,
or a list of those; it may be a coroutine function. A pack tells subscribers that a resource
changed with ``resource.updated()`` (or ``updated(uri)`` for one URI of a template).
"""

from __future__ import annotations

import inspect
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolpacks.core.prompts._prompt import Completer, PromptArgument, _described, arguments_of

__all__ = ["Listener", "Resource", "resource"]

Listener = Callable[[str], None]
"""Called with a resource's URI when it changed (``notifications/resources/updated``)."""

_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class _Listeners:
    """The subscribers of one resource (shared by its copies; thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[Listener] = []

    def add(self, listener: Listener) -> None:
        with self._lock:
            self._items.append(listener)

    def discard(self, listener: Listener) -> None:
        with self._lock:
            if listener in self._items:
                self._items.remove(listener)

    def snapshot(self) -> list[Listener]:
        with self._lock:
            return list(self._items)


@dataclass(frozen=True, slots=True)
class Resource:
    """A resource a pack offers: its URI (or URI template), name and content function."""

    uri: str
    """The URI, or a URI template with ``{name}`` parameters."""
    fn: Callable[..., Any]
    """Returns the contents (see the module doc); a template's parameters come as keywords."""
    name: str
    """A short name (listings show it; qualified by its pack for selection)."""
    description: str = ""
    """What it holds."""
    mime_type: str | None = None
    """The MIME type of its contents (default: ``text/plain`` for text,
    ``application/octet-stream`` for bytes)."""
    complete: Completer | None = None
    """Suggests values for a template parameter (``completion/complete``), or None."""
    title: str | None = None
    """A human-readable title."""
    pack: str = field(default="", kw_only=True)
    """The pack that registered it (set when it is registered)."""
    listeners: _Listeners = field(default_factory=_Listeners, compare=False, repr=False)
    """Who subscribed to it (servers add and remove themselves)."""

    @property
    def qualified(self) -> str:
        """``pack.name``: what an agent's ``resources`` globs match."""
        return f"{self.pack}.{self.name}" if self.pack else self.name

    @property
    def templated(self) -> bool:
        """Whether ``uri`` is a template with parameters."""
        return _PARAM.search(self.uri) is not None

    @property
    def parameters(self) -> tuple[PromptArgument, ...]:
        """A template's parameters (in URI order)."""
        return tuple(PromptArgument(n, None, True) for n in _PARAM.findall(self.uri))

    def match(self, uri: str) -> dict[str, str] | None:
        """The parameters ``uri`` gives this resource, or None when it is not this one's."""
        if not self.templated:
            return {} if uri == self.uri else None
        pattern, last = [], 0
        for m in _PARAM.finditer(self.uri):
            pattern.append(re.escape(self.uri[last : m.start()]))
            pattern.append(f"(?P<{m.group(1)}>[^/]+)")
            last = m.end()
        pattern.append(re.escape(self.uri[last:]))
        found = re.fullmatch("".join(pattern), uri)
        return found.groupdict() if found else None

    def updated(self, uri: str | None = None) -> None:
        """Tell every subscriber the resource changed (``uri``: which URI of a template)."""
        for listener in self.listeners.snapshot():
            listener(uri or self.uri)


def resource(
    uri: str,
    *,
    name: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    complete: Completer | None = None,
    title: str | None = None,
) -> Callable[[Callable[..., Any]], Resource]:
    """Make a function the ``Resource`` at ``uri`` (a URI or a ``{param}`` template).

    Args:
        uri: The resource's URI or URI template.
        name: Its name (default: the function's name).
        description: What it holds (default: the docstring's summary).
        mime_type: The MIME type of its contents.
        complete: Suggests values for template parameters.
        title: A human-readable title.
    """

    def make(f: Callable[..., Any]) -> Resource:
        text, docs = _described(f)
        wanted = {a.name for a in arguments_of(f, docs)}
        missing = set(_PARAM.findall(uri)) - wanted
        if missing and not any(
            p.kind == p.VAR_KEYWORD for p in inspect.signature(f).parameters.values()
        ):
            raise TypeError(
                f"resource {uri!r}: the function {f.__name__} takes no parameter "
                f"{', '.join(sorted(missing))}; add one per URI template parameter"
            )
        return Resource(
            uri, f, name or f.__name__, description if description is not None else text,
            mime_type, complete, title,
        )

    return make
