"""Fixtures for host tests: sample in-process packs, a host and its toolset, isolation."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator

import pytest

from toolpacks import Host, Toolset, tool

_counter = iter(range(1_000_000))


@tool(tags=["read"])
def search(query: str) -> str:
    """Search the web."""
    return f"web:{query}"


@tool(tags=["read", "io"])
def fetch(url: str) -> str:
    """Fetch a page."""
    return f"page:{url}"


@tool(tags=["write", "destructive"])
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted:{path}"


@tool(name="search", tags=["read"])
def search_docs(query: str) -> str:
    """Search the documentation."""
    return f"docs:{query}"


@pytest.fixture
def packs(pack_of: Callable[..., types.ModuleType]) -> dict[str, types.ModuleType]:
    """Two in-process packs: ``web`` (search, fetch) and ``fs`` (delete)."""
    return {"web": pack_of(search, fetch), "fs": pack_of(delete)}


@pytest.fixture
def host(packs: dict[str, types.ModuleType]) -> Iterator[Host]:
    """A host with the ``packs``: ``web`` (search, fetch) and ``fs`` (delete)."""
    h = Host({}, discover=False)
    for name, pack in packs.items():
        h.add_pack(pack, name)
    yield h
    h.close()


@pytest.fixture
def toolset(host: Host) -> Toolset:
    """The default toolset of ``host``: every tool of ``web`` and ``fs``."""
    return host.toolset()


@pytest.fixture(autouse=True)
def _isolated(isolated: None) -> None:
    """Every host test runs isolated (see the root conftest's ``isolated``)."""
