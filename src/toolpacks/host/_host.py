"""``Host``: discovers packs, reads configuration, and builds each agent's toolset."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import TYPE_CHECKING, Any

from toolpacks.exceptions import ConfigError
from toolpacks.host._gcpause import paused_gc
from toolpacks.packs._record import LoadedPack, PackInfo, PackSource

if TYPE_CHECKING:  # the rest is imported where used, so that importing Host stays light
    import logging

    from toolpacks.core._hooks import GlobalHook
    from toolpacks.core._tool import Tool
    from toolpacks.host._approval import ApprovalHandler
    from toolpacks.host._conflicts import ConflictPolicy
    from toolpacks.host._toolset import Toolset
    from toolpacks.host.config._load import AgentConfig, LoadedConfig

__all__ = ["Host", "PackInfo"]

_PACK_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")


def _logger() -> logging.Logger:
    import logging  # on first use, like the modules building a toolset: Host imports light

    return logging.getLogger("toolpacks")


def _close(packs: Iterable[LoadedPack]) -> None:
    """Release what each of ``packs`` holds; a failure is logged, the others still closed."""
    for pack in packs:
        if pack.closer is not None:
            try:
                pack.closer()
            except Exception:
                _logger().exception("closing pack %r failed", pack.info.name)


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
        path: A list of directories to search for packs instead of ``sys.path`` (not a file).
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
        from toolpacks.core import _logscrub
        from toolpacks.core._secrets import secret_values
        from toolpacks.host.config._load import load_config
        from toolpacks.packs.entrypoints._discovery import path_entries, spare_pydantic_plugin_scan
        from toolpacks.packs.entrypoints._loading import new_plugin_manager
        from toolpacks.packs.entrypoints._manifest import Manifests

        self._path = path_entries(path)  # one string is refused: Host(path="x.toml") is a slip
        if discover:  # before the configuration's models: pydantic may not need its own scan
            spare_pydantic_plugin_scan()
        self.config: LoadedConfig = load_config(config)
        """The validated configuration and where it came from."""
        self.approval = approval
        """The approval handler given to every toolset this host builds."""
        self._discover = discover
        self._environ = environ if environ is not None else os.environ
        _logscrub.remember(self, secret_values(self.config.raw, self._environ))  # every log
        self._manifests = Manifests(self._path, self._environ, self.config.path)
        self._pm = new_plugin_manager()
        self._in_process: dict[str, PackSource] = {}
        self._host_hooks: list[GlobalHook] = []
        self._host_authorizers: list[Callable[..., Any]] = []
        self._trusted: bool | None = None
        self._given_settings: set[str] = set()
        self.discovery_problems: tuple[str, ...] = ()
        """Malformed entry-point metadata that discovery skipped (one message each)."""
        self._discovered = self._scan()
        self._state = _State(self._compose())

    @property
    def trusted(self) -> bool:
        """Whether the configuration may grant capability and run code.

        An explicit configuration is trusted; an implicit one when ``toolpacks trust``
        recorded it with the same bytes and the same code (see ``_trust_scope``). Checked
        once per host.
        """
        if self._trusted is None:
            from toolpacks.host._trust_scope import trusted

            self._trusted = trusted(self.config)
        return self._trusted

    def check_trusted(self) -> None:
        """Refuse to build from an implicit configuration that needs trust and lacks it.

        Raises:
            UntrustedConfigError: The configuration was found in the working directory, is
                not trusted as it is, and sets keys that grant capability or run code.
        """
        from toolpacks.host._trust_scope import refuse_untrusted

        refuse_untrusted(self.config, lambda: self.trusted)

    def _scan(self) -> dict[str, PackSource]:
        """Installed packs, unless discovery is off; records discovery's problems."""
        if not self._discover:
            return {}
        from toolpacks.host._sources import installed

        sources, self.discovery_problems = installed(self.config.config, self._path, self._environ)
        return sources

    def _compose(self) -> dict[str, PackSource]:
        """Every pack the host knows (see ``_sources.compose``)."""
        from toolpacks.host._sources import compose

        return compose(self.config, self._discovered, self._in_process, self._environ, self._path)

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
        raise LookupError(f"no pack named {name!r}; known: {', '.join(self._state.sources) or '-'}")

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
            _logger().warning("in-process pack %r replaces %s", name, previous.info.describe())
        module = obj.__name__ if isinstance(obj, ModuleType) else type(obj).__module__
        info = PackInfo(name, None, None, module, "available", source="in_process")
        settings = (
            dict(config) if config is not None else self.config.config.pack_settings().get(name, {})
        )
        source = PackSource(info, obj, settings)
        state = self._state
        with state.lock:
            if config is not None:
                self._given_settings.add(name)
            else:
                self._given_settings.discard(name)
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
        from toolpacks.packs.entrypoints._loading import new_plugin_manager

        old = self._state
        self._pm = new_plugin_manager()
        self._discovered = self._scan()
        self._state = _State(self._compose())
        _close(old.loaded.values())

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
            self._manifests.remember(source, loaded)
            return loaded

    def _load_source(self, source: PackSource, state: _State) -> LoadedPack:
        info = source.info
        if info.status in ("disabled", "clash", "failed"):
            return LoadedPack(info)
        if self._settings_need_trust(info.name):
            error = (
                f"{self.config.source} was found in the working directory and is not trusted, "
                f"so its [packs.{info.name}] table was not given to {info.describe()}; review "
                "it, then run `toolpacks trust`"
            )
            return LoadedPack(replace(info, status="failed", error=error))
        from toolpacks.core._secrets import secret_values
        from toolpacks.host.config._load import resolve_env

        where = f"{self.config.source}: packs.{info.name}"
        try:
            settings = resolve_env(dict(source.settings), where, self._environ)
        except ConfigError as exc:
            return LoadedPack(replace(info, status="failed", error=str(exc)))
        # Values read from the environment are secrets whatever their key (a ``dsn``).
        secrets = tuple(secret_values(dict(source.settings), environ=self._environ))
        loaded = self._load_resolved(source, settings, state, secrets)
        loaded.secrets = (*loaded.secrets, *secrets)
        return loaded

    def _settings_need_trust(self, name: str) -> bool:
        """Whether ``[packs.NAME]`` comes from an implicit, untrusted file (so is withheld).

        Every road that runs pack code goes through ``load``, so this is where untrusted
        settings stop, whichever command asked (``toolset`` refuses earlier, as a whole).
        Settings passed in code (``add_pack(config=...)``) are the caller's, not the file's.
        """
        if name in self._given_settings:
            return False
        from toolpacks.host._trust_scope import settings_withheld

        return settings_withheld(self.config, name, lambda: self.trusted)

    def _load_resolved(
        self,
        source: PackSource,
        settings: dict[str, Any],
        state: _State,
        secrets: tuple[str, ...] = (),
    ) -> LoadedPack:
        info = source.info
        if info.source in ("mcp", "files", "llm", "isolated") and not self.trusted:
            error = (
                f"{self.config.source} was found in the working directory and is not trusted, "
                f"so {info.describe()} was not started; run `toolpacks trust` to trust it"
            )
            return LoadedPack(replace(info, status="failed", error=error))
        if info.source in ("mcp", "isolated"):  # an isolated pack is a server of its own
            from toolpacks.host._approval import ApprovalRequest, Approver
            from toolpacks.packs.mcp._client import load_mcp_pack as load

            ask = lambda **r: Approver(self.approval).ask(ApprovalRequest(**r))  # noqa: E731
            load = source.extra.loader(settings, secrets) if info.source == "isolated" else load
            return load(info, source.extra, self.config.base_dir, self._environ, ask)
        if info.source == "files":
            return self._load_files(info, source.extra)
        from toolpacks.packs.entrypoints._loading import load_pack

        config_dir = self.config.path.parent if self.config.path is not None else None
        return load_pack(self._pm, source, settings, state.plugins, secrets, config_dir)

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
        return {qualified: t for name in names for qualified, t in self.load(name).tools.items()}

    def hook(
        self, event: str, *, tags: Iterable[str] = ()
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a host-level hook for every toolset built afterwards.

        ``event`` is ``before_invoke``, ``after_invoke``, ``on_error``, ``on_yield`` (called
        with ``tool=``, ``context=`` and ``arguments=``/``result=``/``exc=``/``item=``) or
        ``authorize`` (returns allow / deny / ask / None). With ``tags``, it fires only for
        tools sharing at least one of them.
        """
        from toolpacks.host._host_hooks import registrar

        return registrar(event, tags, self._host_hooks, self._host_authorizers)

    def agent_config(self, agent: str | None) -> AgentConfig:
        """The configuration of ``agent``; with no agent, every pack with no filters.

        Raises:
            ConfigError: No configuration defines ``agent`` (also when there is none).
        """
        if agent is None:
            from toolpacks.host.config._load import AgentConfig

            return AgentConfig()
        agents = self.config.config.agents
        found = agents.get(agent)
        if found is not None:
            return found
        from toolpacks.host._messages import no_agent_message

        raise ConfigError(no_agent_message(self.config, agent))

    @paused_gc  # 10^4 tools listed from manifests: 0.2 s of work, else 1 s of collections
    def toolset(
        self,
        agent: str | None = None,
        *,
        packs: Sequence[str] | None = None,
        include_tags: Iterable[str] | None = None,
        exclude_tags: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        tools: Iterable[str] | None = None,
        exclude_hints: Iterable[str] | None = None,
        require_hints: Iterable[str] | None = None,
        on_conflict: str | ConflictPolicy | None = None,
        priority: Sequence[str] | None = None,
        rename: Mapping[str, str] | None = None,
        require_approval: bool | Iterable[str] | None = None,
        predicate: Callable[[Tool], bool] | None = None,
        approval: ApprovalHandler | None = None,
        optional_packs: Sequence[str] | None = None,
        defer: Sequence[str] | str | None = None,
        tool_scopes: Mapping[str, Sequence[str]] | None = None,
    ) -> Toolset:
        """Build the toolset ``agent``'s configuration describes; keywords override it.

        A pack named explicitly (in the agent's ``packs`` or in ``packs=``) must load: if it
        fails, so does the toolset. Packs taken in by ``"*"`` or listed in
        ``optional_packs`` are left out when they fail (the loader logs why once;
        ``toolpacks doctor`` shows it). ``tools`` (keep) and ``exclude`` (drop) take qualified
        or exposed names and globs (``"files.read_*"``); ``exclude_hints`` and ``require_hints``
        hint names; ``tool_scopes`` replaces the agent's ``[agents.NAME.tool_scopes]`` table.

        Raises:
            ConfigError: Unknown agent, pack, hint or tag; a name or glob matching no tool;
                a bad rename, approval list or policy.
            PackError: A pack named explicitly failed to load.
            UntrustedConfigError: The configuration was found implicitly, is not trusted,
                and sets keys that need trust.
            ToolConflictError: Two packs offer one exposed name under ``on_conflict="error"``.
        """
        from toolpacks.host import _assembly as steps  # building a toolset: not at import
        from toolpacks.host._compose import assemble
        from toolpacks.host._conflicts import ConflictContext
        from toolpacks.host._offerings import offered
        from toolpacks.host._toolset import Toolset

        self.check_trusted()
        state = self._state
        configured = agent is not None and agent in self.config.config.agents
        request = steps.request_for(
            agent,
            self.agent_config(agent),
            f"{self.config.source}: agents.{agent}" if configured else "Host.toolset()",
            self.config.config.priority,
            {  # the keywords that override the agent's table
                "packs": packs, "include_tags": include_tags, "exclude_tags": exclude_tags,
                "exclude": exclude, "tools": tools, "exclude_hints": exclude_hints,
                "on_conflict": on_conflict, "priority": priority, "rename": rename,
                "require_approval": require_approval, "predicate": predicate,
                "optional_packs": optional_packs, "defer": defer, "require_hints": require_hints,
            },
        )
        names = steps.resolve_packs(request.packs, state.sources, request.scope, request.optional)
        lazy = request.predicate is None  # a predicate may read anything: import for it
        listed = [self._manifests.listed(state.sources[n], self.load, lazy) for n in names]
        loaded = steps.required_loaded(listed, request)
        steps.check_names(request, loaded, state.sources)
        from toolpacks.packs.entrypoints._pinning import load_pins, lock_path
        candidates = steps.select(request, loaded, load_pins(lock_path(self.config.base_dir)))
        infos = {p.info.name: p.info for p in loaded}
        context = ConflictContext(
            agent=agent,
            priority=request.priority,
            describe_pack=lambda n: infos[n].describe() if n in infos else repr(n),
        )
        assembled = assemble(candidates, request.rename, request.policy, context)
        # An alias shares its base pack's code, and so its hooks: fire each once.
        hooks = dict.fromkeys([*self._host_hooks, *(h for p in loaded for h in p.hooks)])
        authorizers = dict.fromkeys(
            [*self._host_authorizers, *(a for p in loaded for a in p.authorizers)]
        )
        settings, spec = self.config.config.settings, self.agent_config(agent)
        toolset = Toolset(
            steps.entries(request, assembled, steps.call_options(settings, loaded), list(hooks)),
            agent=agent,
            approval=approval if approval is not None else self.approval,
            authorizers=list(authorizers), max_concurrency=settings.max_concurrency,
            ranker=next((p.ranker for p in loaded if p.ranker is not None), None),
        )
        toolset.catalog = offered(loaded, spec.prompts, spec.resources, request.scope)
        tool_scopes = spec.tool_scopes if tool_scopes is None else tool_scopes
        toolset.set_scopes(spec.scopes, tool_scopes, where=request.scope)  # host/identity
        toolset.left_out = dict(request.left_out)  # why each tool of the packs was left out
        from toolpacks.host.credentials._vault import equipped  # asyncio, pluggy: not at import
        return equipped(toolset, self.config.config.credentials, self._pm.hook)  # credentials

    def shown_config(self) -> dict[str, Any]:
        """The raw configuration with secret-looking values redacted (for display)."""
        from toolpacks.core._secrets import redact

        return dict(redact(dict(self.config.raw)))

    def close(self) -> None:
        """Release what loaded packs hold (stop MCP servers)."""
        _close(self._state.loaded.values())

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
