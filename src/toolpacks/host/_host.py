"""``Host``: discovers packs, reads configuration, and builds each agent's toolset."""

from __future__ import annotations

import inspect
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

from toolpacks.core._hooks import GlobalHook, HookSet
from toolpacks.core._jsonargs import ArgumentLimits
from toolpacks.core._names import is_safe
from toolpacks.core._options import CallOptions
from toolpacks.core._secrets import redact, secret_values
from toolpacks.core._tool import Tool
from toolpacks.exceptions import ConfigError
from toolpacks.host._approval import ApprovalHandler
from toolpacks.host._config import (
    AgentConfig,
    LoadedConfig,
    load_config,
    resolve_env,
)
from toolpacks.host._conflicts import (
    ConflictContext,
    ConflictPolicy,
    get_policy,
    priority_on_conflict,
)
from toolpacks.host._toolset import ToolEntry, Toolset
from toolpacks.packs._loading import (
    ImplCaller,
    LoadedPack,
    PackInfo,
    PackSource,
    load_pack,
    new_plugin_manager,
)

__all__ = ["Host", "PackInfo"]

logger = logging.getLogger("toolpacks")

_PACK_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")
_CONFIGURED = ("alias", "mcp", "files")


@dataclass(slots=True)
class _State:
    """One consistent view of the packs; ``reload`` swaps in a new one atomically."""

    sources: dict[str, PackSource]
    loaded: dict[str, LoadedPack] = field(default_factory=dict)
    plugins: dict[str, Any] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)


class Host:
    """Discovers installed packs and builds the toolset each agent should have.

    Args:
        config: A path to ``toolpacks.toml`` (or a pyproject.toml), a mapping, or None to use
            ``toolpacks.toml`` (else ``[tool.toolpacks]`` in pyproject.toml) in the working
            directory. An explicit configuration is trusted; an implicit one may not start
            MCP servers or load local tool directories until trusted (``toolpacks trust``).
        approval: Decides calls to tools that require approval; without it they are denied.
        discover: Look for installed packs (entry point group ``toolpacks``). Turn off to
            use only packs added with ``add_pack``.
        path: Directories to search for installed packs instead of ``sys.path``.
        environ: The environment (for ``TOOLPACKS_*`` controls and ``{ env = ... }`` values);
            ``os.environ`` by default.
    """

    def __init__(
        self,
        config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        *,
        approval: ApprovalHandler | None = None,
        discover: bool = True,
        path: Sequence[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config: LoadedConfig = load_config(config)
        """The validated configuration and where it came from."""
        self.approval = approval
        """The approval handler given to every toolset this host builds."""
        self._discover = discover
        self._path = ([path] if isinstance(path, str) else list(path)) if path is not None else None
        self._environ = environ if environ is not None else os.environ
        self._pm = new_plugin_manager()
        self._in_process: dict[str, PackSource] = {}
        self._host_hooks: list[GlobalHook] = []
        self._host_authorizers: list[Callable[..., Any]] = []
        self.discovery_problems: tuple[str, ...] = ()
        """Malformed entry-point metadata that discovery skipped (one message each)."""
        self._discovered = self._scan()
        self._state = _State(self._compose())

    # -- discovery ----------------------------------------------------------------------------

    @property
    def trusted(self) -> bool:
        """Whether the configuration may start processes and load local code."""
        if not self.config.implicit or self.config.path is None:
            return True
        from toolpacks.packs._trust import is_trusted

        return is_trusted(self.config.path)

    def _scan(self) -> dict[str, PackSource]:
        """Installed packs (entry points), with disabled and clashing ones marked."""
        cfg = self.config.config
        settings = cfg.pack_settings()
        sources: dict[str, PackSource] = {}
        if not self._discover:
            return sources
        from toolpacks.packs._discovery import discover, select

        found = discover(self._path)
        self.discovery_problems = tuple(found.problems)
        for entry in found.entries:
            info = PackInfo(
                entry.name, entry.dist_name, entry.dist_version, entry.value, "available"
            )
            sources[entry.name] = PackSource(info, settings=settings.get(entry.name, {}))
        for name, clashing in found.clashes.items():
            dists = ", ".join(f"{e.dist_name} {e.dist_version}" for e in clashing)
            error = (
                f"pack name {name!r} is declared by several distributions ({dists}); "
                "neither is loaded until all but one are uninstalled"
            )
            first = clashing[0]
            sources[name] = PackSource(
                PackInfo(name, first.dist_name, first.dist_version, first.value, "clash", error)
            )
        verdicts = select(sorted(sources), cfg.disabled, self._environ)
        for name, reason in verdicts.items():
            source = sources.get(name)
            if reason is not None and source is not None and source.info.status == "available":
                info = replace(source.info, status="disabled", error=reason)
                sources[name] = replace(source, info=info)
        return sources

    def _compose(self) -> dict[str, PackSource]:
        """Every pack: installed, in-process, aliases, MCP servers and file tools, sorted.

        Raises:
            ConfigError: A configured name (alias, MCP server, file tools) is already taken.
        """
        cfg = self.config.config
        where = self.config.source
        sources = dict(self._discovered)
        sources.update(self._in_process)

        def claim(name: str, key: str) -> None:
            if name in sources:
                raise ConfigError(
                    f"{where}: {key}: the name {name!r} is already used by "
                    f"{sources[name].info.describe()}; choose another name"
                )

        for name, server in cfg.mcp_servers.items():
            claim(name, f"mcp_servers.{name}")
            info = PackInfo(name, None, None, server.command, "available", source="mcp")
            sources[name] = PackSource(info, extra=server)
        if cfg.files.dirs:
            claim(cfg.files.pack, "files.pack")
            dirs = [self.config.base_dir / d for d in cfg.files.dirs]
            info = PackInfo(cfg.files.pack, None, None, None, "available", source="files")
            sources[cfg.files.pack] = PackSource(info, extra=dirs)
        aliases = {name: table for name, table in cfg.pack_settings().items() if "pack" in table}
        for name in aliases:
            claim(name, f"packs.{name}")
        for name, table in aliases.items():
            base = table["pack"]
            origin = sources.get(base)
            settings = {k: v for k, v in table.items() if k != "pack"}
            if origin is None or origin.info.source not in ("entry_point", "in_process"):
                what = "is not a pack" if origin is None else f"is {origin.info.describe()}"
                error = (
                    f"{where}: packs.{name}.pack = {base!r}, but {base!r} {what}; an alias "
                    f"instantiates an installed or added pack again. Known packs: "
                    f"{', '.join(sorted(n for n in sources if n not in aliases)) or 'none'}"
                )
                info = PackInfo(
                    name, None, None, None, "failed", error, source="alias", alias_of=base
                )
                sources[name] = PackSource(info, settings=settings, base=base)
                continue
            info = replace(origin.info, name=name, source="alias", alias_of=base)
            sources[name] = PackSource(info, origin.obj, settings, origin.base or base)
        configured = [n for n, src in sources.items() if src.info.source in _CONFIGURED]
        if configured:
            # `[packs] disabled` and TOOLPACKS_DISABLE/TOOLPACKS_PACKS cover every pack the
            # configuration defines too (an MCP server is a pack); in-process packs are the
            # application's own choice.
            from toolpacks.packs._discovery import select

            for name, reason in select(configured, cfg.disabled, self._environ).items():
                source = sources[name]
                if reason is not None and source.info.status == "available":
                    info = replace(source.info, status="disabled", error=reason)
                    sources[name] = replace(source, info=info)
        return dict(sorted(sources.items()))

    @property
    def packs(self) -> list[PackInfo]:
        """Every known pack, sorted by name, with its current status."""
        state = self._state
        return [
            state.loaded[name].info if name in state.loaded else source.info
            for name, source in state.sources.items()
        ]

    def pack(self, name: str) -> PackInfo:
        """The ``PackInfo`` of one pack (raises ``LookupError`` listing the known packs)."""
        for info in self.packs:
            if info.name == name:
                return info
        known = ", ".join(self._state.sources) or "none"
        raise LookupError(f"no pack named {name!r}; known: {known}")

    def add_pack(
        self, obj: Any, name: str | None = None, *, config: Mapping[str, Any] | None = None
    ) -> PackInfo:
        """Add an in-process pack: an object or module with ``@hookimpl`` functions.

        An installed pack of the same name is replaced (with a warning); aliases of
        ``name`` in the configuration (``[packs.X] pack = "name"``) now instantiate it.

        Args:
            obj: The pack object or module.
            name: The pack name (default: the module's or class's name).
            config: Its settings (as ``[packs.NAME]`` would give).

        Raises:
            ValueError: ``name`` is not a valid pack name, or the configuration uses it for
                an alias, an MCP server or file tools.
        """
        if name is None:
            derived = getattr(obj, "__name__", None) or type(obj).__name__
            name = str(derived).rsplit(".", 1)[-1]
        if not _PACK_NAME.match(name):
            raise ValueError(
                f"pack name {name!r} is invalid; use letters, digits, '_' and '-' (no dots: "
                "qualified tool names are '<pack>.<tool>')"
            )
        previous = self._state.sources.get(name)
        if previous is not None and previous.info.source not in ("entry_point", "in_process"):
            raise ValueError(
                f"pack name {name!r} is already used by {previous.info.describe()} in "
                f"{self.config.source}; add the pack under another name"
            )
        if previous is not None and previous.info.source == "entry_point":
            logger.warning("in-process pack %r replaces %s", name, previous.info.describe())
        module = obj.__name__ if isinstance(obj, ModuleType) else type(obj).__module__
        info = PackInfo(name, None, None, module, "available", source="in_process")
        settings = (
            dict(config) if config is not None else self.config.config.pack_settings().get(name, {})
        )
        source = PackSource(info, obj, settings)
        state = self._state
        with state.lock:
            replaced = self._in_process.get(name)
            self._in_process[name] = source
            try:
                sources = self._compose()
            except ConfigError:
                if replaced is None:
                    del self._in_process[name]
                else:
                    self._in_process[name] = replaced
                raise
            old, state.sources = state.sources, sources
            for key, new in sources.items():
                if old.get(key) != new:
                    state.loaded.pop(key, None)
            stale = state.plugins.pop(name, None)
            if stale is not None and stale is not obj and self._pm.is_registered(stale):
                self._pm.unregister(stale)
        return info

    def reload(self) -> None:
        """Discover packs again and forget loaded ones (file tools are read anew).

        Toolsets built before keep working with the tools they have; a toolset built while
        this runs sees the old set or the new one, never a mix.
        """
        old = self._state
        self._pm = new_plugin_manager()
        self._discovered = self._scan()
        self._state = _State(self._compose())
        for pack in old.loaded.values():
            if pack.closer is not None:
                try:
                    pack.closer()
                except Exception:
                    logger.exception("closing pack %r failed", pack.info.name)

    # -- loading ------------------------------------------------------------------------------

    def load(self, name: str) -> LoadedPack:
        """Import and register one pack (once); a failure is recorded, not raised.

        Raises:
            LookupError: No pack has that name.
        """
        state = self._state
        with state.lock:
            if name in state.loaded:
                return state.loaded[name]
            source = state.sources.get(name)
            if source is None:
                raise LookupError(
                    f"no pack named {name!r}; known: {', '.join(state.sources) or 'none'}"
                )
            loaded = self._load_source(source, state)
            state.loaded[name] = loaded
            return loaded

    def _load_source(self, source: PackSource, state: _State) -> LoadedPack:
        info = source.info
        if info.status in ("disabled", "clash", "failed"):
            return LoadedPack(info)
        where = f"{self.config.source}: packs.{info.name}"
        try:
            settings = resolve_env(dict(source.settings), where, self._environ)
        except ConfigError as exc:
            return LoadedPack(replace(info, status="failed", error=str(exc)))
        loaded = self._load_resolved(source, settings, state)
        loaded.secrets = tuple(secret_values(settings))
        return loaded

    def _load_resolved(
        self, source: PackSource, settings: dict[str, Any], state: _State
    ) -> LoadedPack:
        info = source.info
        if info.source in ("mcp", "files") and not self.trusted:
            error = (
                f"{self.config.source} was found in the working directory and is not trusted, "
                f"so {info.describe()} was not started; run `toolpacks trust` to trust it"
            )
            return LoadedPack(replace(info, status="failed", error=error))
        if info.source == "mcp":
            from toolpacks.packs._mcp_client import load_mcp_pack

            return load_mcp_pack(info, source.extra, self.config.base_dir)
        if info.source == "files":
            return self._load_files(info, source.extra)
        return load_pack(self._pm, source, settings, state.plugins)

    def _load_files(self, info: PackInfo, dirs: list[Any]) -> LoadedPack:
        from toolpacks.filetools._loader import load_tools_dir

        tools: dict[str, Tool] = {}
        problems: list[str] = []
        for directory in dirs:
            found, issues = load_tools_dir(directory)
            problems.extend(issues)
            for t in found:
                qualified = f"{info.name}.{t.name}"
                if qualified in tools:
                    problems.append(
                        f"{directory}: tool {t.name!r} is also defined in an earlier tools "
                        "directory; the first one is kept"
                    )
                    continue
                tools[qualified] = t.replace(pack=info.name)
        info = replace(info, status="loaded", tools=tuple(tools))
        return LoadedPack(info, tools, problems=problems)

    def tools(self, packs: Iterable[str] | None = None) -> dict[str, Tool]:
        """Qualified name to tool for ``packs`` (default: every enabled pack), loading them."""
        names = list(packs) if packs is not None else list(self._state.sources)
        out: dict[str, Tool] = {}
        for name in names:
            out.update(self.load(name).tools)
        return out

    # -- hooks --------------------------------------------------------------------------------

    def hook(
        self, event: str, *, tags: Iterable[str] = ()
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a host-level hook for every toolset built afterwards.

        ``event`` is ``before_invoke``, ``after_invoke``, ``on_error``, ``on_yield`` (called
        with ``tool=``, ``context=`` and ``arguments=``/``result=``/``exc=``/``item=``) or
        ``authorize`` (returns allow / deny / ask / None). With ``tags``, it fires only for
        tools sharing at least one of them.
        """
        if event not in _HOOK_ARGS:
            raise ValueError(f"unknown hook event {event!r}; use one of: {', '.join(_HOOK_ARGS)}")
        tag_set = frozenset((tags,) if isinstance(tags, str) else tags)

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            caller = _host_hook_caller(event, fn)
            if event == "authorize":
                self._host_authorizers.append(
                    caller if not tag_set else _TaggedAuthorizer(caller, tag_set)
                )
            else:
                self._host_hooks.append(GlobalHook(event, caller, tag_set))
            return fn

        return register

    # -- toolsets -----------------------------------------------------------------------------

    def agent_config(self, agent: str | None) -> AgentConfig:
        """The configuration of ``agent`` (every pack, no filters, when none is configured).

        Raises:
            ConfigError: Agents are configured but ``agent`` is not one of them.
        """
        agents = self.config.config.agents
        if agent is None or not agents:
            return AgentConfig()
        try:
            return agents[agent]
        except KeyError:
            raise ConfigError(
                f"{self.config.source}: no agent named {agent!r}; configured agents: "
                f"{', '.join(sorted(agents))}"
            ) from None

    def toolset(
        self,
        agent: str | None = None,
        *,
        packs: Sequence[str] | None = None,
        include_tags: Iterable[str] | None = None,
        exclude_tags: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        on_conflict: str | ConflictPolicy | None = None,
        priority: Sequence[str] | None = None,
        rename: Mapping[str, str] | None = None,
        require_approval: bool | Iterable[str] | None = None,
        predicate: Callable[[Tool], bool] | None = None,
        approval: ApprovalHandler | None = None,
    ) -> Toolset:
        """Build the toolset ``agent``'s configuration describes; keywords override it.

        A pack that failed to load is left out (with a warning; ``toolpacks doctor`` shows
        why); every other pack keeps working.

        Raises:
            ConfigError: Unknown agent, unknown pack, bad rename, approval list or policy.
            ToolConflictError: Two packs offer one exposed name under ``on_conflict="error"``.
        """
        state = self._state
        cfg = self.agent_config(agent)
        scope = (
            f"{self.config.source}: agents.{agent}"
            if agent is not None and agent in self.config.config.agents
            else "Host.toolset()"
        )
        wanted = list(packs) if packs is not None else list(cfg.packs)
        pack_names = self._resolve_packs(wanted, state, scope)
        policy = get_policy(on_conflict if on_conflict is not None else cfg.on_conflict)
        order = tuple(
            priority if priority is not None else (cfg.priority or self.config.config.priority)
        )
        if policy is priority_on_conflict and not order:
            raise ConfigError(
                f'{scope}: on_conflict = "priority" needs a priority list of pack names '
                "(earliest wins): priority = [...] for the agent or in [packs]"
            )
        include = _name_set(include_tags if include_tags is not None else cfg.include_tags)
        excluded_tags = _name_set(exclude_tags if exclude_tags is not None else cfg.exclude_tags)
        excluded = _name_set(exclude if exclude is not None else cfg.exclude)
        renames = dict(rename if rename is not None else cfg.rename)
        approval_spec = require_approval if require_approval is not None else cfg.require_approval
        needs_approval_names = (
            frozenset() if isinstance(approval_spec, bool) else _name_set(approval_spec)
        )
        loaded = [self.load(name) for name in pack_names]
        for pack in loaded:
            if pack.info.status == "failed":
                logger.warning(
                    "%s is left out of the toolset: %s", pack.info.describe(), pack.info.error
                )
        self._check_tool_names(renames, "rename", loaded, scope)
        self._check_tool_names(needs_approval_names, "require_approval", loaded, scope)
        self._check_tool_names(excluded, "exclude", loaded, scope)
        targets: dict[str, str] = {}
        for qualified, new in sorted(renames.items()):
            if not isinstance(new, str) or not is_safe(new):
                raise ConfigError(
                    f"{scope}: rename {qualified!r} = {new!r}: not a valid tool name "
                    "(use 1-64 letters, digits, '_' or '-')"
                )
            if new in targets:
                raise ConfigError(
                    f"{scope}: rename gives {targets[new]!r} and {qualified!r} the same name "
                    f"{new!r}; choose two names"
                )
            targets[new] = qualified
        from toolpacks.host._compose import Candidate, assemble
        from toolpacks.packs._pinning import load_pins, lock_path

        pins = load_pins(lock_path(self.config.base_dir))

        candidates: list[Candidate] = []
        for pack in loaded:
            for qualified, t in pack.tools.items():
                if t.allowed_agents is not None and agent not in t.allowed_agents:
                    continue
                if include and include.isdisjoint(t.tags):
                    continue
                if not excluded_tags.isdisjoint(t.tags) or qualified in excluded:
                    continue
                if predicate is not None and not predicate(t):
                    continue
                if pins is not None:
                    problem = pins.problem(pack.info.name, t)
                    if problem is not None:
                        logger.warning("withheld: %s", problem.split("\n", 1)[0])
                        continue
                candidates.append(Candidate(qualified, pack.info.name, t))
        infos = {p.info.name: p.info for p in loaded}
        context = ConflictContext(
            agent=agent,
            priority=order,
            describe_pack=lambda n: infos[n].describe() if n in infos else repr(n),
        )
        assembled = assemble(candidates, renames, policy, context)
        hooks = list(self._host_hooks)
        authorizers = list(self._host_authorizers)
        secrets: list[str] = []
        for pack in loaded:
            hooks.extend(pack.hooks)
            authorizers.extend(pack.authorizers)
            secrets.extend(pack.secrets)
        # An alias shares its base pack's code, and so its hooks: fire each once.
        hooks = list(dict.fromkeys(hooks))
        authorizers = list(dict.fromkeys(authorizers))
        settings = self.config.config.settings
        base = CallOptions(
            expose_errors=settings.expose_errors,
            limits=ArgumentLimits(settings.max_argument_bytes, settings.max_argument_depth),
            extra_args=settings.extra_args,
            max_content_chars=settings.max_content_chars,
            redact=tuple(dict.fromkeys(secrets)),
        )
        entries: list[ToolEntry] = []
        hook_sets: dict[frozenset[str], HookSet] = {}
        for exposed, candidate in assembled.items():
            t = candidate.tool
            hook_set = hook_sets.get(t.tags)
            if hook_set is None:
                hook_set = hook_sets[t.tags] = HookSet.for_tags(hooks, t.tags)
            needs_approval = (
                t.require_approval
                or approval_spec is True
                or candidate.qualified in needs_approval_names
            )
            entries.append(
                ToolEntry(
                    exposed,
                    candidate.qualified,
                    candidate.pack,
                    t,
                    replace(base, hooks=hook_set),
                    needs_approval,
                )
            )
        return Toolset(
            entries,
            agent=agent,
            approval=approval if approval is not None else self.approval,
            authorizers=authorizers,
            max_concurrency=settings.max_concurrency,
        )

    def _check_tool_names(
        self, names: Iterable[str], key: str, loaded: Sequence[LoadedPack], scope: str
    ) -> None:
        """Refuse qualified names that match no tool: a typo would silently do nothing.

        A name is unknown when its pack is unknown to the host, or when its pack is loaded
        in this toolset and has no such tool. Names of packs that exist but are not in the
        toolset (not selected, disabled, clashing, failed) are let through, so disabling a
        pack or one broken pack never takes down a toolset.
        """
        sources = self._state.sources
        tools = {p.info.name: p.tools for p in loaded if p.info.status == "loaded"}
        unknown: list[str] = []
        for name in sorted(names):
            pack = name.split(".", 1)[0]
            if pack not in sources or (pack in tools and name not in tools[pack]):
                unknown.append(name)
        if unknown:
            known = sorted(q for pack_tools in tools.values() for q in pack_tools)
            raise ConfigError(
                f"{scope}: {key} names unknown tool(s) {', '.join(unknown)}; use qualified "
                f"names 'pack.tool' (known in this toolset: {', '.join(known) or 'none'}; "
                f"packs: {', '.join(sources) or 'none'})"
            )

    def _resolve_packs(self, wanted: Sequence[str], state: _State, scope: str) -> list[str]:
        """Pack names in order: the listed ones first, then (for ``"*"``) the rest, sorted.

        Disabled and clashing packs are left out with a warning.
        """
        if isinstance(wanted, str):
            wanted = [wanted]
        unknown = [name for name in wanted if name != "*" and name not in state.sources]
        if unknown:
            raise ConfigError(
                f"{scope}: unknown pack(s) {', '.join(unknown)}; known packs: "
                f"{', '.join(state.sources) or 'none'} (is the pack installed?)"
            )
        names = [name for name in wanted if name != "*"]
        if "*" in wanted:
            names.extend(name for name in state.sources if name not in names)
        out: list[str] = []
        for name in names:
            info = state.sources[name].info
            if info.status in ("disabled", "clash"):
                if name in wanted:
                    logger.warning(
                        "pack %r is %s and is left out: %s", name, info.status, info.error
                    )
                continue
            if name not in out:
                out.append(name)
        return out

    def shown_config(self) -> dict[str, Any]:
        """The raw configuration with secret-looking values redacted (for display)."""
        result: dict[str, Any] = redact(dict(self.config.raw))
        return result

    def close(self) -> None:
        """Release what loaded packs hold (stop MCP servers)."""
        for pack in self._state.loaded.values():
            if pack.closer is not None:
                try:
                    pack.closer()
                except Exception:
                    logger.exception("closing pack %r failed", pack.info.name)

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _name_set(names: Iterable[str]) -> frozenset[str]:
    """A set of names; a lone string is one name, not its characters."""
    return frozenset((names,) if isinstance(names, str) else names)


_HOOK_ARGS: dict[str, tuple[str, ...]] = {
    "before_invoke": ("tool", "arguments", "context"),
    "after_invoke": ("tool", "result", "context"),
    "on_error": ("tool", "exc", "context"),
    "on_yield": ("tool", "item", "context"),
    "authorize": ("tool", "arguments", "context"),
}


def _host_hook_caller(event: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``fn`` to receive only the arguments it declares, as pluggy does for packs.

    Raises:
        TypeError: ``fn`` declares a parameter the event does not provide.
    """
    allowed = _HOOK_ARGS[event]
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: give it everything
        return fn
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return fn
    names = tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    required = [p.name for p in params if p.default is p.empty and p.kind is not p.VAR_POSITIONAL]
    unknown = [n for n in required if n not in allowed]
    if unknown:
        raise TypeError(
            f"{event} hook {getattr(fn, '__qualname__', fn)!r} takes {', '.join(unknown)}; "
            f"{event} hooks are called with keyword arguments {', '.join(allowed)}"
        )
    return ImplCaller(fn, tuple(n for n in names if n in allowed))


@dataclass(frozen=True, slots=True)
class _TaggedAuthorizer:
    """An ``authorize`` hook that answers only for tools sharing one of its tags."""

    fn: Callable[..., Any]
    tags: frozenset[str]

    def __call__(self, **kwargs: Any) -> Any:
        tool = kwargs.get("tool")
        if tool is not None and self.tags.isdisjoint(tool.tags):
            return None
        return self.fn(**kwargs)
