"""The pack's resources: static text and binary, a template, and one that changes.

``test://watched-resource`` is subscribable: ``update_watched_resource`` (a tool) changes its
text and calls ``resource.updated()``, which sends ``notifications/resources/updated`` to
every session that subscribed to it.
"""

from __future__ import annotations

import threading

from toolpacks import Resource, resource

from toolpacks_everything._media import PNG

__all__ = ["RESOURCES", "static_binary", "static_text", "template_data", "watched"]


@resource("test://static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@resource("test://static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (a 1x1 PNG)."""
    return PNG


def _ids(argument: str, value: str) -> list[str]:
    return [i for i in ("1", "12", "123", "42") if i.startswith(value)]


@resource("test://template/{id}/data", mime_type="application/json", complete=_ids)
def template_data(id: str) -> str:
    """Data for one id (a resource template).

    Args:
        id: The id the URI names.
    """
    return f'{{"id":"{id}","templateTest":true,"data":"Data for ID: {id}"}}'


class _Watched:
    """The text of ``test://watched-resource``, which a tool may change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._text = "Watched resource content"
        self.resource: Resource = resource(
            "test://watched-resource", name="watched_resource", mime_type="text/plain",
            description="A resource whose subscribers hear when it changes.",
        )(self.read)

    def read(self) -> str:
        """The current text."""
        with self._lock:
            return self._text

    def set(self, text: str) -> None:
        """Change the text and tell the subscribers."""
        with self._lock:
            self._text = text
        self.resource.updated()


watched = _Watched()
"""``test://watched-resource``: its text, and the resource to notify through."""

RESOURCES = (static_text, static_binary, template_data, watched.resource)
"""The pack's resources, in registration order."""
