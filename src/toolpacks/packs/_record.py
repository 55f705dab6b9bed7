"""The pack record every source shares.

What a pack is (``PackInfo``), where its code comes from (``PackSource``) and what loading it
gave (``LoadedPack``).

Entry points, MCP servers, llm plugins, aliases, in-process objects and file tools all end
as these records, so the host sees packs, never sources.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from toolpacks.core._hooks import GlobalHook
    from toolpacks.core._tool import Tool

__all__ = ["LoadedPack", "PackInfo", "PackSource", "PackStatus", "SourceKind"]

PackStatus = Literal["available", "loaded", "failed", "disabled", "clash"]
"""``available``: found, not imported yet; ``loaded``: imported and registered; ``failed``:
import or registration failed (see ``error``); ``disabled``: blocked by configuration or
environment; ``clash``: two distributions declare the same pack name."""

SourceKind = Literal["entry_point", "in_process", "alias", "mcp", "files", "llm", "isolated"]


@dataclass(frozen=True, slots=True)
class PackInfo:
    """What the host knows about one pack."""

    name: str
    """The pack name (entry-point name, alias, MCP server name)."""
    distribution: str | None = None
    """The distribution that provides it (None for in-process packs and MCP servers)."""
    version: str | None = None
    """The distribution's version."""
    module: str | None = None
    """The module the entry point names (or the object's module)."""
    status: PackStatus = "available"
    """Where the pack stands; see ``PackStatus``."""
    error: str | None = None
    """Why it failed, was disabled or clashes."""
    source: SourceKind = "entry_point"
    """How it reached the host."""
    tools: tuple[str, ...] = ()
    """Qualified names of its tools, once loaded."""
    import_seconds: float | None = None
    """How long importing and registering took, once loaded."""
    alias_of: str | None = None
    """For an alias (``[packs.NAME] pack = "other"``), the pack it instantiates again."""

    def describe(self) -> str:
        """``pack 'files' (toolpacks-files 0.1.0)``, for messages."""
        if self.distribution:
            return f"pack {self.name!r} ({self.distribution} {self.version or '?'})"
        return f"pack {self.name!r} ({self.source.replace('_', '-')})"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form (stable keys, for ``--json`` output)."""
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "module": self.module,
            "status": self.status,
            "error": self.error,
            "source": self.source,
            "alias_of": self.alias_of,
            "tools": list(self.tools),
            "import_seconds": self.import_seconds,
        }


@dataclass(frozen=True, slots=True)
class PackSource:
    """Where a pack's code comes from and how it is configured."""

    info: PackInfo
    """Its identity."""
    obj: Any = None
    """The in-process pack object or module (for ``in_process``)."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Its ``[packs.NAME]`` settings (environment references resolved at load time)."""
    base: str | None = None
    """For an alias, the name of the pack whose code it reuses."""
    extra: Any = None
    """Kind-specific data (an MCP server's configuration, a list of tools directories)."""


@dataclass(slots=True)
class LoadedPack:
    """A pack after loading: its tools under qualified names, and its global hooks."""

    info: PackInfo
    """Its identity and status."""
    tools: dict[str, Tool] = field(default_factory=dict)
    """Qualified name to tool, in registration order."""
    hooks: list[GlobalHook] = field(default_factory=list)
    """Its invocation hooks."""
    authorizers: list[Callable[..., Any]] = field(default_factory=list)
    """Its ``authorize`` implementations."""
    problems: list[str] = field(default_factory=list)
    """Non-fatal problems (a broken file tool beside working ones)."""
    closer: Callable[[], Any] | None = None
    """Releases resources (stops an MCP server)."""
    secrets: tuple[str, ...] = field(default=(), repr=False)
    """Values of its secret-looking settings (environment references resolved), scrubbed
    from error messages and hook payloads."""
    ranker: Any = None
    """What its ``toolpacks_ranker`` hook returned: ranks ``Toolset.search`` (or None)."""
    prompts: list[Any] = field(default_factory=list)
    """The ``Prompt`` objects its ``register_prompts`` registered (or its MCP server offers)."""
    resources: list[Any] = field(default_factory=list)
    """The ``Resource`` objects its ``register_resources`` registered (or its server offers)."""
