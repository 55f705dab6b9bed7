"""Helpers for testing tool packs without installing them.

Example:
    >>> from toolpacks import hookimpl, tool
    >>> from toolpacks.testing import call, make_host
    >>> @tool
    ... def ping() -> str:
    ...     '''Answer pong.'''
    ...     return "pong"
    >>> class Pack:
    ...     @hookimpl
    ...     def register_tools(self, register):
    ...         register(ping)
    >>> host = make_host(Pack(), names=["demo"])
    >>> host.toolset().names()
    ['ping']
    >>> call(host.toolset(), "ping").value
    'pong'

With pytest, ``from toolpacks.testing import toolpacks_host`` in a ``conftest.py`` gives
tests a ``toolpacks_host`` fixture: a function building a host from packs.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import ModuleType
from typing import Any

from toolpacks.core._context import ToolContext
from toolpacks.core._result import ToolResult
from toolpacks.host._host import Host
from toolpacks.host._toolset import Toolset

__all__ = ["call", "make_host", "toolpacks_host"]


def make_host(
    *packs: ModuleType | object | str,
    names: Sequence[str] | None = None,
    config: Mapping[str, Any] | None = None,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
    **host_options: Any,
) -> Host:
    """A host with only the given packs, none discovered from the environment.

    Args:
        *packs: Pack objects or modules, or importable module names (``"toolpacks_files"``).
        names: Pack names, one per pack (default: each module's last name component).
        config: A configuration mapping (agents, settings...).
        settings: Per-pack settings by pack name, as ``[packs.NAME]`` tables would give.
        **host_options: Passed to ``Host`` (``approval=...``).
    """
    if names is not None and len(names) != len(packs):
        raise ValueError(f"names has {len(names)} entries for {len(packs)} packs; give one each")
    host = Host(dict(config or {}), discover=False, **host_options)
    for index, pack in enumerate(packs):
        obj = importlib.import_module(pack) if isinstance(pack, str) else pack
        name = names[index] if names is not None else None
        if name is None:
            name = getattr(obj, "__name__", type(obj).__name__).rsplit(".", 1)[-1]
            name = name.removeprefix("toolpacks_")
        host.add_pack(obj, name, config=(settings or {}).get(name))
    return host


def call(
    toolset: Toolset,
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    context: ToolContext | None = None,
) -> ToolResult:
    """Call a tool synchronously (runs an event loop); for tests and scripts."""
    return asyncio.run(toolset.call(name, arguments, context))


try:
    import pytest
except ImportError:  # pragma: no cover - pytest is optional at runtime
    pass
else:

    @pytest.fixture
    def toolpacks_host() -> Iterator[Callable[..., Host]]:
        """A factory fixture: ``toolpacks_host(pack, settings={...})`` returns a ``Host``.

        Every host it made is closed after the test.
        """
        hosts: list[Host] = []

        def factory(*packs: Any, **options: Any) -> Host:
            host = make_host(*packs, **options)
            hosts.append(host)
            return host

        yield factory
        for host in hosts:
            host.close()
