"""``Host``: discovers packs, reads configuration, and builds each agent's toolset."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from toolpacks._approval import ApprovalHandler
from toolpacks._config import (
    AgentConfig,
    LoadedConfig,
    load_config,
    redact,
    resolve_env,
    secret_values,
)
from toolpacks._conflicts import ConflictContext, ConflictPolicy, get_policy
from toolpacks._hooks import GlobalHook, HookSet
from toolpacks._invoke import CallOptions
from toolpacks._jsonargs import ArgumentLimits
from toolpacks._names import is_safe, safe_name
from toolpacks._packs import LoadedPack, PackInfo, PackSource, load_pack, new_plugin_manager
from toolpacks._tool import Tool
from toolpacks._toolset import Toolset, ToolEntry
from toolpacks.exceptions import ConfigError, UntrustedConfigError

__all__ = ["Host", "PackInfo"]

logger = logging.getLogger("toolpacks")


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
        self._path = list(path) if path is not None else None
        self._environ = environ if environ is not None else os.environ
        self._pm = new_plugin_manager()
        self._in_process: dict[str, PackSource] = {}
        self._host_hooks: list[GlobalHook] = []
        self._host_authorizers: list[Callable[..., Any]] = []
        self._state = _State(self._scan())

    # -- discovery ----------------------------------------------------------------------------

    @property
    def trusted(self) -> bool:
        """Whether the configuration may start processes and load local code."""
        if not self.config.implicit or self.config.path is None:
            return True
        from toolpacks._trust import is_trusted

        return is_trusted(self.config.path)

    def _scan(self) -> dict[str, PackSource]:
        cfg = self.config.config
        settings = cfg.pack_settings()
        sources: dict[str, PackSource] = {}
        if self._discover:
            from toolpacks._discovery import discover, select

            found = discover(self._path)
            for entry in found.entries:
                info = PackInfo(
                    entry.name, entry.dist_name, entry.dist_version, entry.value, "available"
                )
                sources[entry.name] = PackSource(info, settings=settings.get(entry.name, {}))
            for name, clashing in found.clashes.items():
                dists = ", ".join(f"{e.dist_name} {e.dist_version}" for e in clashing)
                error = (
                    f"pack name {name!r} is declared by several distributions ({dists}); "
                    "uninstall one of them"
                )
                first = clashing[0]
                sources[name] = PackSource(
                    PackInfo(name, first.dist_name, first.dist_version, first.value, "clash", error)
                )
            verdicts = select(list(sources), cfg.disabled, self._environ)
            for name, reason in verdicts.items():
                if reason is not None and sources[name].info.status == "available":
                    sources[name] = replace(
                        sources[name], info=replace(sources[name].info, status="disabled", error=reason)
                    )
        for name, source in self._in_process.items():
            sources[name] = source
        for name, table in settings.items():
            base = table.get("pack")
            if not isinstance(base, str):
                continue
            if name in sources:
                raise ConfigError(
                    f"{self.config.source}: packs.{name}: alias name {name!r} is already a pack"
                )
            origin = sources.get(base)
            if origin is None:
                raise ConfigError(
                    f"{self.config.source}: packs.{name}.pack = {base!r}, but no pack named "
                    f"{base!r} is installed; installed: {', '.join(sorted(sources)) or 'none'}"
                )
            pack_settings = {k: v for k, v in table.items() if k != "pack"}
            info = replace(origin.info, name=name, source="alias", alias_of=base)
            sources[name] = PackSource(info, origin.obj, pack_settings, base)
        for name, server in self.config.config.mcp_servers.items():
            info = PackInfo(name, None, None, server.command, "available", source="mcp")
            sources[name] = PackSource(info, extra=server)
        files = self.config.config.files
        if files.dirs:
            dirs = [self.config.base_dir / d for d in files.dirs]
            info = PackInfo(files.pack, None, None, None, "available", source="files")
            sources[files.pack] = PackSource(info, extra=dirs)
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
        raise LookupError(f"no pack named {name!r}; known: {', '.join(self._state.sources) or 'none'}")

    def add_pack(
        self, obj: Any, name: str | None = None, *, config: Mapping[str, Any] | None = None
    ) -> PackInfo:
        """Add an in-process pack: an object or module with ``@hookimpl`` functions.

        Args:
            obj: The pack object or module.
            name: The pack name (default: the module's or class's name).
            config: Its settings (as ``[packs.NAME]`` would give).
        """
        pack_name = name or getattr(obj, "__name__", None) or type(obj).__name__
        pack_name = pack_name.rsplit(".", 1)[-1]
        module = getattr(obj, "__module__", None) if not hasattr(obj, "__file__") else obj.__name__
        info = PackInfo(pack_name, None, None, module, "available", source="in_process")
        settings = dict(config) if config is not None else self.config.config.pack_settings().get(
            pack_name, {}
        )
        source = PackSource(info, obj, settings)
        self._in_process[pack_name] = source
        with self._state.lock:
            self._state.sources[pack_name] = source
            self._state.sources = dict(sorted(self._state.sources.items()))
            self._state.loaded.pop(pack_name, None)
        return info

    def reload(self) -> None:
        """Discover packs again and forget loaded ones (file tools are read anew).

        Toolsets built before keep working with the tools they have; a toolset built while
        this runs sees the old set or the new one, never a mix.
        """
        old = self._state
        self._pm = new_plugin_manager()
        self._state = _State(self._scan())
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
        if info.status in ("disabled", "clash"):
            return LoadedPack(info)
        where = f"{self.config.source}: packs.{info.name}"
        try:
            settings = resolve_env(dict(source.settings), where)
        except ConfigError as exc:
            return LoadedPack(replace(info, status="failed", error=str(exc)))
        if info.source in ("mcp", "files") and not self.trusted:
            error = (
                f"{self.config.source} was found in the working directory and is not trusted, "
                f"so {info.describe()} was not started; run `toolpacks trust` to trust it"
            )
            return LoadedPack(replace(info, status="failed", error=error))
        if info.source == "mcp":
            from toolpacks._mcp_client import load_mcp_pack

            return load_mcp_pack(info, source.extra, self.config.base_dir)
        if info.source == "files":
            return self._load_files(info, source.extra)
        return load_pack(self._pm, source, settings, state.plugins)

    def _load_files(self, info: PackInfo, dirs: list[Any]) -> LoadedPack:
        from toolpacks._filetools import load_tools_dir

        tools: dict[str, Tool] = {}
        problems: list[str] = []
        for directory in dirs:
            found, issues = load_tools_dir(directory)
            problems.extend(issues)
            for t in found:
                tools[f"{info.name}.{t.name}"] = t.replace(pack=info.name)
        return LoadedPack(replace(info, status="loaded", tools=tuple(tools)), tools, problems=problems)

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
        valid = ("before_invoke", "after_invoke", "on_error", "on_yield", "authorize")
        if event not in valid:
            raise ValueError(f"unknown hook event {event!r}; use one of: {', '.join(valid)}")

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            if event == "authorize":
                self._host_authorizers.append(fn)
            else:
                self._host_hooks.append(GlobalHook(event, fn, frozenset(tags)))
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

        Raises:
            ConfigError: Unknown agent, unknown pack, bad rename or policy.
            ToolConflictError: Two packs offer one exposed name under ``on_conflict="error"``.
        """
        state = self._state
        cfg = self.agent_config(agent)
        wanted = list(packs) if packs is not None else list(cfg.packs)
        pack_names = self._resolve_packs(wanted, state)
        policy_spec: str | ConflictPolicy = on_conflict if on_conflict is not None else cfg.on_conflict
        policy = get_policy(policy_spec)
        include = frozenset(include_tags if include_tags is not None else cfg.include_tags)
        excluded_tags = frozenset(exclude_tags if exclude_tags is not None else cfg.exclude_tags)
        excluded = frozenset(exclude if exclude is not None else cfg.exclude)
        renames = dict(rename if rename is not None else cfg.rename)
        approval_spec = require_approval if require_approval is not None else cfg.require_approval
        loaded = [self.load(name) for name in pack_names]
        from toolpacks._compose import Candidate, assemble
        from toolpacks._pinning import load_pins, lock_path

        pins = load_pins(lock_path(self))

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
                        logger.warning("withheld: %s", problem.split(chr(10), 1)[0])
                        continue
                candidates.append(Candidate(qualified, pack.info.name, t))
        known = {q for pack in loaded for q in pack.tools}
        unknown = sorted(set(renames) - known)
        if unknown:
            raise ConfigError(
                f"{self.config.source}: agents.{agent}.rename names unknown tool(s) "
                f"{', '.join(unknown)}; qualified names look like 'pack.tool'"
            )
        for new in renames.values():
            if not is_safe(new):
                raise ConfigError(
                    f"{self.config.source}: rename target {new!r} is not a valid tool name "
                    "(use 1-64 letters, digits, '_' or '-')"
                )
        infos = {p.info.name: p.info for p in loaded}
        context = ConflictContext(
            agent=agent,
            priority=tuple(priority if priority is not None else cfg.priority),
            describe_pack=lambda n: infos[n].describe() if n in infos else repr(n),
        )
        assembled = assemble(candidates, renames, policy, context)
        hooks = list(self._host_hooks)
        authorizers = list(self._host_authorizers)
        secrets: list[str] = []
        for pack in loaded:
            hooks.extend(pack.hooks)
            authorizers.extend(pack.authorizers)
            secrets.extend(secret_values(state.sources[pack.info.name].settings))
        settings = self.config.config.settings
        base = CallOptions(
            expose_errors=settings.expose_errors,
            limits=ArgumentLimits(settings.max_argument_bytes, settings.max_argument_depth),
            extra_args=settings.extra_args,
            max_content_chars=settings.max_content_chars,
            redact=tuple(secrets),
        )
        entries: list[ToolEntry] = []
        hook_sets: dict[frozenset[str], HookSet] = {}
        for exposed, candidate in assembled.items():
            t = candidate.tool
            hook_set = hook_sets.get(t.tags)
            if hook_set is None:
                hook_set = hook_sets[t.tags] = HookSet.for_tags(hooks, t.tags)
            needs_approval = t.require_approval or approval_spec is True or (
                not isinstance(approval_spec, bool) and candidate.qualified in set(approval_spec)
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

    def _resolve_packs(self, wanted: Sequence[str], state: _State) -> list[str]:
        if "*" in wanted:
            return [
                name
                for name, source in state.sources.items()
                if source.info.status not in ("disabled", "clash")
            ]
        unknown = [name for name in wanted if name not in state.sources]
        if unknown:
            raise ConfigError(
                f"{self.config.source}: unknown pack(s) {', '.join(unknown)}; known packs: "
                f"{', '.join(state.sources) or 'none'} (is the pack installed?)"
            )
        out: list[str] = []
        for name in wanted:
            info = state.sources[name].info
            if info.status in ("disabled", "clash"):
                logger.warning("pack %r is %s and is left out: %s", name, info.status, info.error)
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


def untrusted_error(source: str) -> UntrustedConfigError:
    """The error raised when an untrusted configuration asks to run code."""
    return UntrustedConfigError(
        f"{source} was found in the working directory and is not trusted; run "
        "`toolpacks trust` after reading it"
    )
