"""The placeholder of a tool listed from its pack's manifest, and what a manifest keeps of a pack.

See ``toolpacks.packs.entrypoints._manifest`` for manifests themselves.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from toolpacks.core._hooks import ToolHooks
from toolpacks.core._tool import Tool
from toolpacks.core.define._definition import ToolMetadata
from toolpacks.core.define._traits import ToolHints
from toolpacks.exceptions import PackError

if TYPE_CHECKING:
    from toolpacks.core._context import ToolContext
    from toolpacks.core._result import ToolResult
    from toolpacks.core.call._options import CallOptions
    from toolpacks.packs._record import LoadedPack, PackInfo

__all__ = [
    "ManifestTool",
    "canonical",
    "has_hooks",
    "listed_pack",
    "pack_record",
    "resolver",
    "tool_record",
]


def canonical(value: Any) -> str:
    """The JSON text a manifest stores and compares (raises ``TypeError`` for non-JSON)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def has_hooks(pack: LoadedPack) -> bool:
    """Whether the pack implements hooks that apply to every tool of a toolset.

    Invocation hooks, ``authorize`` and a search ranker: such a pack is never listed from a
    manifest (it is imported so that they run).
    """
    return bool(pack.hooks or pack.authorizers or pack.ranker)


def pack_record(name: str, loaded: LoadedPack) -> dict[str, Any]:
    """What a manifest keeps of a pack loaded under ``name``: its hooks flag and its tools."""
    return {
        "pack": name,
        "hooks": has_hooks(loaded),
        "tools": [tool_record(q, t) for q, t in loaded.tools.items()],
    }


def listed_pack(info: PackInfo, variant: Any, load: Callable[[], LoadedPack]) -> LoadedPack | None:
    """A ``LoadedPack`` of placeholders for a manifest's variant (None: it cannot serve).

    A variant of a pack with hooks cannot: the pack must be imported for them to run.
    """
    from toolpacks.packs._record import LoadedPack

    if not isinstance(variant, Mapping) or variant.get("hooks") is not False:
        return None
    records = variant.get("tools")
    if not isinstance(records, list):
        return None
    tools: dict[str, Tool] = {}
    try:
        for record in records:
            tool = ManifestTool.from_record(record, info.name, resolver(record, load, False))
            tools[record["qualified"]] = tool
    except (KeyError, TypeError, ValueError):  # a manifest of the right format but wrong shape
        return None
    return LoadedPack(replace(info, status="loaded", tools=tuple(tools)), tools)


def tool_record(qualified: str, tool: Tool) -> dict[str, Any]:
    """What a manifest keeps of one tool: the definition a toolset is built from."""
    hints = tool.hints
    agents = tool.allowed_agents
    return {
        "qualified": qualified,
        "scoped_name": tool.scoped_name,
        "name": tool.name,
        "description": tool.description,
        "title": tool.title,
        "instructions": tool.instructions,
        "tags": sorted(tool.tags),
        "hints": [hints.read_only, hints.destructive, hints.idempotent, hints.open_world],
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
        "kind": tool.kind,
        "timeout": tool.timeout,
        "lock": tool.lock is not None,
        "require_approval": tool.require_approval,
        "allowed_agents": None if agents is None else sorted(agents),
        "extra_args": tool.extra_args,
        "credentials": list(tool.credentials),
        "scopes": sorted(tool.scopes),
    }


class ManifestTool(Tool):
    """A tool listed from its pack's manifest, its pack not imported yet.

    It has everything a toolset, an exporter or a filter reads. Calling it (``invoke``,
    ``stream``, ``invoke_sync``, the object itself) or reading ``fn`` imports the pack (once)
    and uses the real tool; that raises ``PackError`` (``invoke`` returns an error result)
    when the pack fails to load, no longer has the tool, or defines it differently from the
    manifest. A toolset swaps the real tool in after its first call.
    """

    deferred = True
    _scoped: str
    _record: dict[str, Any]
    _resolver: Callable[[ManifestTool], Tool]
    _real: Tool | None

    @classmethod
    def from_record(
        cls, record: Mapping[str, Any], pack: str, resolver: Callable[[ManifestTool], Tool]
    ) -> ManifestTool:
        """The placeholder for one manifest record; ``resolver`` finds the real tool."""
        new: ManifestTool = object.__new__(cls)
        hints = record["hints"]
        agents = record["allowed_agents"]
        new.__dict__.update(
            name=record["name"],
            description=record["description"],
            title=record["title"],
            instructions=record["instructions"],
            tags=frozenset(record["tags"]),
            hints=ToolHints(*hints),
            kind=record["kind"],
            timeout=record["timeout"],
            require_approval=record["require_approval"],
            allowed_agents=None if agents is None else frozenset(agents),
            extra_args=record["extra_args"],
            credentials=tuple(record.get("credentials", ())),
            scopes=frozenset(record.get("scopes", ())),
            lock=None,
            hooks=ToolHooks(),
            fixed_kwargs={},
            parent=None,
            pack=pack,
            strict=False,
            validate_output=True,
            max_abandoned_threads=4,
            _input_schema=record["input_schema"],
            _output_schema=record["output_schema"],
            _explicit_schema=None,
            _signature=None,
            _subtools={},
            _bound_to=None,
            _plan=None,
            _scoped=record["scoped_name"],
            _record=dict(record),
            _resolver=resolver,
            _real=None,
        )
        new.metadata = ToolMetadata(new)
        return new

    @property
    def scoped_name(self) -> str:
        """The name under which its pack registers it (``parent.child`` for a subtool)."""
        return self._scoped

    @property
    def fn(self) -> Callable[..., Any]:  # type: ignore[override]
        """The real tool's function (this imports the pack)."""
        return self.resolve().fn

    def resolve(self) -> Tool:
        """The real tool, importing its pack the first time.

        Raises:
            PackError: The pack fails to load, no longer registers this tool, or defines it
                otherwise than its manifest said; the message is meant for the model.
        """
        real = self._real
        if real is None:
            real = self._real = self._resolver(self)
        return real

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the real tool's function (this imports the pack)."""
        return self.resolve().fn(*args, **kwargs)

    async def invoke(
        self,
        arguments: Mapping[str, Any] | str | bytes | None = None,
        context: ToolContext | None = None,
        *,
        options: CallOptions | None = None,
    ) -> ToolResult:
        """``Tool.invoke`` of the real tool; an error result when it cannot be had."""
        try:
            real = self.resolve()
        except PackError as exc:
            from toolpacks.core._result import error_result
            from toolpacks.core.call._run import next_call_id

            call_id = context.call_id if context is not None and context.call_id else ""
            return error_result(
                "tool_error", str(exc), tool_name=self.name, call_id=call_id or next_call_id()
            )
        return await real.invoke(arguments, context, options=options)

    def stream(
        self,
        arguments: Mapping[str, Any] | str | bytes | None = None,
        context: ToolContext | None = None,
        *,
        options: CallOptions | None = None,
    ) -> AsyncIterator[Any]:
        """``Tool.stream`` of the real tool (raises ``PackError`` when it cannot be had)."""
        return self.resolve().stream(arguments, context, options=options)


def resolver(
    record: Mapping[str, Any], load: Callable[[], LoadedPack], hooks: bool
) -> Callable[[ManifestTool], Tool]:
    """Finds the real tool of ``record`` by importing its pack, and checks it is the same."""

    def resolve(listed: ManifestTool) -> Tool:
        pack = load()
        info = pack.info
        qualified = record["qualified"]
        name = listed.name
        if info.status != "loaded":
            raise PackError(
                f"Tool '{name}' is unavailable: {info.describe()} failed to load: {info.error}"
            )
        real = pack.tools.get(qualified)
        changed = "its definition changed"
        if real is None:
            changed = f"{info.describe()} no longer provides {qualified!r}"
        elif has_hooks(pack) != hooks:
            changed = f"{info.describe()} now implements hooks that apply to every call"
        elif canonical(tool_record(qualified, real)) == canonical(record):
            return real
        raise PackError(
            f"Tool '{name}' is withheld: {changed} since this toolset listed it from the "
            "pack's manifest, which was out of date and has been rebuilt. Do not retry it; "
            "the toolset must be built again to offer its current definition."
        )

    return resolve
