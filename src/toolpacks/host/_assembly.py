"""Building one toolset, as a sequence of small steps (``Host.toolset`` runs them in order).

1. ``request_for``: the agent's configuration with keyword overrides applied, checked.
2. ``resolve_packs``: the pack names to load, in order, leaving out disabled ones.
3. ``check_names``: every name, glob, hint and tag the request mentions selects something;
   renames are valid (``_selection`` holds the matching rules).
4. ``select``: the tools that pass permissions, tag and hint filters, allow and deny globs,
   and pins.
5. ``assemble`` (``_compose``): a unique provider-safe exposed name for each.
6. ``call_options`` and ``entries``: how each tool is called (limits, hooks, approval).

Each step is a function of the previous steps' values, so each can be read and tested alone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from toolpacks.core._hooks import GlobalHook, HookSet
from toolpacks.core._jsonargs import ArgumentLimits
from toolpacks.core._tool import Tool
from toolpacks.core.call._options import CallOptions
from toolpacks.core.define._names import is_safe
from toolpacks.exceptions import ConfigError
from toolpacks.host._compose import Candidate
from toolpacks.host._conflicts import ConflictPolicy, get_policy, priority_on_conflict
from toolpacks.host._selection import (
    check_aliased,
    check_hints,
    check_patterns,
    check_tags,
    left_out_by,
)
from toolpacks.host._toolset import ToolEntry
from toolpacks.packs._record import LoadedPack, PackSource
from toolpacks.packs.entrypoints._pinning import Pins

if TYPE_CHECKING:
    from toolpacks.host.config._load import AgentConfig, SettingsConfig

__all__ = [
    "ToolsetRequest",
    "call_options",
    "check_names",
    "entries",
    "request_for",
    "required_loaded",
    "resolve_packs",
    "select",
]

logger = logging.getLogger("toolpacks")


@dataclass(frozen=True, slots=True)
class ToolsetRequest:
    """What one toolset is built from: an agent's configuration with overrides applied."""

    agent: str | None
    """The agent the toolset is for (None: no agent)."""
    scope: str
    """Where the request comes from, for messages (``toolpacks.toml: agents.researcher``)."""
    packs: tuple[str, ...]
    """Pack names as given (``"*"`` for every installed pack)."""
    include_tags: frozenset[str]
    """Keep tools with any of these tags (empty: keep all)."""
    exclude_tags: frozenset[str]
    """Drop tools with any of these tags."""
    exclude: frozenset[str]
    """Names or globs of tools to drop (qualified or exposed names)."""
    policy: ConflictPolicy
    """How two packs offering one exposed name are resolved."""
    priority: tuple[str, ...]
    """Pack order for the priority policy (earlier wins)."""
    rename: Mapping[str, str]
    """Qualified name to the name the model sees."""
    approval_all: bool
    """Every tool needs approval."""
    approval_names: frozenset[str]
    """Qualified names of tools that need approval."""
    predicate: Callable[[Tool], bool] | None = None
    """A last filter in code (``Host.toolset(predicate=...)``)."""
    optional: tuple[str, ...] = ()
    """Packs used when they load, done without when they fail or are not installed."""
    tools: frozenset[str] = frozenset()
    """Names or globs of the tools to keep (empty: keep all)."""
    exclude_hints: frozenset[str] = frozenset()
    """Drop tools whose hints resolve to any of these (``destructive``, ...; MCP defaults)."""
    require_hints: frozenset[str] = frozenset()
    """Keep only tools whose hints resolve to all of these (``read_only``, ...)."""
    left_out: dict[str, str] = field(default_factory=dict)
    """Filled by ``select``: qualified name to the key that left the tool out
    (``agents.NAME.exclude``)."""
    defer: tuple[str, ...] | str = ()
    """Patterns of tools to defer, or ``"auto"`` (see ``_defer``)."""
    never_defer: tuple[str, ...] = ()
    """Patterns of tools never deferred."""
    defer_threshold: int = 30
    """``defer = "auto"`` defers every tool past this many."""


def _name_set(names: Iterable[str]) -> frozenset[str]:
    """A set of names; a lone string is one name, not its characters."""
    return frozenset((names,) if isinstance(names, str) else names)


def request_for(
    agent: str | None,
    cfg: AgentConfig,
    scope: str,
    default_priority: Sequence[str],
    overrides: Mapping[str, Any],
) -> ToolsetRequest:
    """Step 1: the agent's configuration ``cfg``, with each non-None override replacing it.

    Raises:
        ConfigError: The conflict policy is unknown, or ``priority`` has no pack order.
    """

    def pick(key: str) -> Any:
        value = overrides.get(key)
        return value if value is not None else getattr(cfg, key)

    policy = get_policy(pick("on_conflict"))
    priority = tuple(pick("priority") or default_priority)
    if policy is priority_on_conflict and not priority:
        raise ConfigError(
            f'{scope}: on_conflict = "priority" needs a priority list of pack names '
            "(earliest wins): priority = [...] for the agent or in [packs]"
        )
    approval = pick("require_approval")
    packs = pick("packs")
    return ToolsetRequest(
        agent=agent,
        scope=scope,
        packs=(packs,) if isinstance(packs, str) else tuple(packs),
        include_tags=_name_set(pick("include_tags")),
        exclude_tags=_name_set(pick("exclude_tags")),
        exclude=_name_set(pick("exclude")),
        policy=policy,
        priority=priority,
        rename=dict(pick("rename")),
        approval_all=approval is True,
        approval_names=frozenset() if isinstance(approval, bool) else _name_set(approval),
        predicate=overrides.get("predicate"),
        optional=_names(pick("optional_packs")),
        tools=_name_set(pick("tools")),
        exclude_hints=_name_set(pick("exclude_hints")),
        require_hints=_name_set(pick("require_hints")),
        defer=defer if isinstance(defer := pick("defer"), str) else tuple(defer),
        never_defer=_names(pick("never_defer")),
        defer_threshold=pick("defer_threshold"),
    )


def _names(value: Iterable[str] | str) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


def resolve_packs(
    wanted: Sequence[str],
    sources: Mapping[str, PackSource],
    scope: str,
    optional: Sequence[str] = (),
) -> list[str]:
    """Step 2: pack names in order: listed, then optional, then (for ``"*"``) the rest.

    Disabled and clashing packs are left out, with a warning when they were named; so are
    optional packs that are not installed.

    Raises:
        ConfigError: A named pack (not an optional one) is unknown to the host.
    """
    unknown = [name for name in wanted if name not in ("*", *optional) and name not in sources]
    if unknown:
        import difflib

        hints = [
            f"{name!r} → did you mean {close[0]!r}?"
            for name in unknown
            if (close := difflib.get_close_matches(name, list(sources), n=1))
        ]
        raise ConfigError(
            f"{scope}: unknown pack(s) {', '.join(unknown)}; known packs: "
            f"{', '.join(sources) or 'none'} (is the pack installed?"
            + (f" {'; '.join(hints)}" if hints else "")
            + ")"
        )
    missing = [name for name in optional if name not in sources]
    if missing:
        logger.warning(
            "%s: optional pack(s) %s not installed; the toolset does without",
            scope,
            ", ".join(missing),
        )
    names = [name for name in (*wanted, *optional) if name != "*" and name in sources]
    if "*" in wanted:
        names.extend(name for name in sources if name not in names)
    out: list[str] = []
    for name in names:
        info = sources[name].info
        if info.status in ("disabled", "clash"):
            if name in wanted:
                logger.warning("pack %r is %s and is left out: %s", name, info.status, info.error)
            continue
        if name not in out:
            out.append(name)
    return out


def required_loaded(loaded: list[LoadedPack], request: ToolsetRequest) -> list[LoadedPack]:
    """Step 2b: refuse a toolset missing a pack it names; ``loaded`` when none is missing.

    A pack named in ``request.packs`` that failed to load fails the toolset; one taken in
    by ``"*"`` or listed as optional is left out (the loader logged why, once).

    Raises:
        PackError: A named, non-optional pack failed, with its distribution and cause.
    """
    for pack in loaded:
        info = pack.info
        if info.status == "failed" and info.name in request.packs:
            if info.name in request.optional:
                continue
            from toolpacks.exceptions import PackError

            raise PackError(
                f"{request.scope}: {info.describe()} failed to load: {info.error}. Fix the "
                f"cause (`toolpacks doctor` shows more), or list the pack in optional_packs "
                "to do without it"
            )
    return loaded


def check_names(
    request: ToolsetRequest, loaded: Sequence[LoadedPack], sources: Mapping[str, PackSource]
) -> None:
    """Step 3: refuse names that match no tool (a typo would silently do nothing).

    A qualified name is unknown when its pack is unknown to the host, or when its pack is
    loaded in this toolset and has no such tool. Names of packs that exist but are not in the
    toolset (not selected, disabled, clashing, failed) are let through, so disabling a pack
    never takes down a toolset. Rename targets must be valid, distinct tool names.

    ``tools`` and ``exclude`` entries (names or globs) must match a tool, hints must be
    known hint names, and tags must be carried by a tool of the selected packs (checked when
    every pack of the toolset loaded: a missing one might carry them).

    Raises:
        ConfigError: What is unknown or invalid, with the names that are known.
    """
    tools = {p.info.name: p.tools for p in loaded if p.info.status == "loaded"}
    bases = {name: source.base for name, source in sources.items()}
    for key, patterns in (("exclude", request.exclude), ("tools", request.tools)):
        check_aliased(request.scope, key, patterns, (p.info.name for p in loaded), bases)
        check_patterns(request.scope, key, patterns, tools, sources, request.rename)
    check_hints(request.scope, request.exclude_hints)
    check_hints(request.scope, request.require_hints, "require_hints")
    if len(tools) == len(loaded) and all(name in tools for name in request.optional):
        every = [t for pack_tools in tools.values() for t in pack_tools.values()]
        check_tags(request.scope, "include_tags", request.include_tags, every)
        check_tags(request.scope, "exclude_tags", request.exclude_tags, every)
    for key, names in (
        ("rename", request.rename),
        ("require_approval", request.approval_names),
    ):
        check_aliased(request.scope, key, names, (p.info.name for p in loaded), bases)
        unknown = [
            name
            for name in sorted(names)
            if (pack := name.split(".", 1)[0]) not in sources
            or (pack in tools and name not in tools[pack])
        ]
        if unknown:
            known = sorted(q for pack_tools in tools.values() for q in pack_tools)
            raise ConfigError(
                f"{request.scope}: {key} names unknown tool(s) {', '.join(unknown)}; use "
                f"qualified names 'pack.tool' (known in this toolset: "
                f"{', '.join(known) or 'none'}; packs: {', '.join(sources) or 'none'})"
            )
    targets: dict[str, str] = {}
    for qualified, new in sorted(request.rename.items()):
        if not isinstance(new, str) or not is_safe(new):
            raise ConfigError(
                f"{request.scope}: rename {qualified!r} = {new!r}: not a valid tool name "
                "(use 1-64 letters, digits, '_' or '-')"
            )
        if new in targets:
            raise ConfigError(
                f"{request.scope}: rename gives {targets[new]!r} and {qualified!r} the same "
                f"name {new!r}; choose two names"
            )
        targets[new] = qualified


def select(
    request: ToolsetRequest, loaded: Sequence[LoadedPack], pins: Pins | None
) -> list[Candidate]:
    """Step 4: the tools the agent may have and the filters keep, in pack order.

    ``allowed_agents``, tag filters (``include_tags``: any overlap keeps), hint filters, the
    allow (``tools``) and deny (``exclude``) globs and the predicate apply; a tool whose
    definition changed since ``toolpacks lock`` is withheld.
    """
    candidates: list[Candidate] = []
    where = request.scope.rsplit(": ", 1)[-1]  # agents.NAME (the file's path is not told)
    for pack in loaded:
        for qualified, t in pack.tools.items():
            if t.allowed_agents is not None and request.agent not in t.allowed_agents:
                continue
            why = left_out_by(request, qualified, t)  # hidden for identity: never recorded
            if why is not None:
                request.left_out[qualified] = f"{where}.{why}"
                continue
            if pins is not None:
                problem = pins.problem(pack.info.name, t)
                if problem is not None:
                    logger.warning("withheld: %s", problem.split("\n", 1)[0])
                    continue
            candidates.append(Candidate(qualified, pack.info.name, t))
    return candidates


def call_options(settings: SettingsConfig, loaded: Sequence[LoadedPack]) -> CallOptions:
    """Step 6a: how every tool of the toolset is called (hooks are added per tool)."""
    secrets = [secret for pack in loaded for secret in pack.secrets]
    return CallOptions(
        expose_errors=settings.expose_errors,
        limits=ArgumentLimits(settings.max_argument_bytes, settings.max_argument_depth),
        extra_args=settings.extra_args,
        max_content_chars=settings.max_content_chars,
        redact=tuple(dict.fromkeys(secrets)),
    )


def entries(
    request: ToolsetRequest,
    assembled: Mapping[str, Candidate],
    base: CallOptions,
    hooks: Sequence[GlobalHook],
) -> list[ToolEntry]:
    """Step 6b: one entry per exposed name, with the global hooks its tags select."""
    out: list[ToolEntry] = []
    hook_sets: dict[frozenset[str], HookSet] = {}
    for exposed, candidate in assembled.items():
        t = candidate.tool
        hook_set = hook_sets.get(t.tags)
        if hook_set is None:
            hook_set = hook_sets[t.tags] = HookSet.for_tags(hooks, t.tags)
        needs_approval = (
            t.require_approval
            or request.approval_all
            or candidate.qualified in request.approval_names
        )
        out.append(
            ToolEntry(
                exposed,
                candidate.qualified,
                candidate.pack,
                t,
                replace(base, hooks=hook_set),
                needs_approval,
            )
        )
    from toolpacks.host._defer import apply_defer

    return apply_defer(
        out, request.defer, request.never_defer, request.defer_threshold, request.scope
    )
