"""The prompts and resources side of a toolset: choosing them per agent, and asking for them.

``offered`` picks, from the packs an agent's toolset was built from, the prompts and
resources its ``[agents.NAME] prompts``/``resources`` globs select (unset: all of them);
``Offerings`` is the part of ``Toolset`` that lists, gets and reads them in-process. Search
and deferral stay tool-only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolpacks.exceptions import ConfigError

if TYPE_CHECKING:  # the prompt catalog is imported when a toolset first offers or asks
    from toolpacks.core.prompts._catalog import Catalog
    from toolpacks.core.prompts._prompt import Prompt
    from toolpacks.core.prompts._resource import Resource
    from toolpacks.packs._record import LoadedPack

__all__ = ["Offerings", "offered"]


def _chosen(items: Iterable[Any], globs: Sequence[str] | None, kind: str, where: str) -> list[Any]:
    items = list(items)
    if globs is None:
        return items
    for glob in globs:
        if not any(fnmatchcase(i.qualified, glob) for i in items):
            known = ", ".join(i.qualified for i in items) or "none"
            raise ConfigError(
                f"{where}: {kind} {glob!r} matches no {kind[:-1]} of the agent's packs "
                f"(they offer: {known}); fix the name or remove it from {kind} = [...]"
            )
    return [i for i in items if any(fnmatchcase(i.qualified, g) for g in globs)]


def offered(
    loaded: Iterable[LoadedPack],
    prompts: Sequence[str] | None,
    resources: Sequence[str] | None,
    where: str = "agent",
) -> Catalog:
    """The catalog of the prompts and resources ``prompts``/``resources`` globs select.

    Raises:
        ConfigError: A name or glob matches nothing the packs offer.
    """
    from toolpacks.core.prompts._catalog import Catalog

    packs = list(loaded)
    return Catalog(
        _chosen((p for pack in packs for p in pack.prompts), prompts, "prompts", where),
        _chosen((r for pack in packs for r in pack.resources), resources, "resources", where),
    )


class Offerings:
    """What a ``Toolset`` offers besides tools: prompts and resources (MCP-shaped answers)."""

    _catalog: Catalog | None = None

    @property
    def catalog(self) -> Catalog:
        """The prompts and resources (empty unless built by a host from packs that offer some)."""
        if self._catalog is None:
            from toolpacks.core.prompts._catalog import Catalog

            self._catalog = Catalog()
        return self._catalog

    @catalog.setter
    def catalog(self, catalog: Catalog) -> None:
        self._catalog = catalog

    left_out: Mapping[str, str] = MappingProxyType({})
    """Tools of the agent's packs its selection left out: qualified name to why
    (``agents.NAME.exclude``). Tools hidden for who asks are not here."""

    def unknown_message(self, name: str, available: Iterable[str]) -> str:
        """The answer to a call of ``name``, which is not in the toolset.

        It names the key that left the tool out when the agent's selection did, and lists
        the tools there are.
        """
        why = self.left_out.get(name) or next(
            (w for q, w in self.left_out.items() if q.split(".", 1)[-1] == name), None
        )
        note = f" {name} is not in this toolset: {why} leaves it out." if why else ""
        return f"Unknown tool '{name}'.{note} Available tools: {', '.join(available) or 'none'}."

    def prompts(self) -> list[Prompt]:
        """The prompts offered, in registration order."""
        return list(self.catalog.prompts.values())

    def resources(self) -> list[Resource]:
        """The resources offered (static ones and templates), in registration order."""
        return list(self.catalog.resources)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> Any:
        """The prompt ``name`` rendered with ``arguments``: ``{"description", "messages"}``.

        Raises:
            LookupError: No such prompt (``UnknownPrompt``).
            ValueError: A required argument is missing, or one is unknown.
            RuntimeError: The prompt's function failed (``OfferingFailed``).
        """
        return await self.catalog.get_prompt(name, arguments)

    async def read_resource(self, uri: str) -> Any:
        """The contents of the resource at ``uri``: ``{"contents": [{uri, mimeType, text|blob}]}``.

        Raises:
            LookupError: No resource or template answers ``uri`` (``UnknownResource``).
            RuntimeError: The resource's function failed (``OfferingFailed``).
        """
        return await self.catalog.read(uri)
