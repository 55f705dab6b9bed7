"""Loading one pack: import it, register it with pluggy, and collect what it registers.

A pack that fails in any way (import error, a hook that raises, an invalid tool, even
``SystemExit``) becomes a failure record; it never takes the host down.
"""

from __future__ import annotations

import importlib
import logging
import signal
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from toolpacks.core._hooks import GlobalHook
from toolpacks.core._tool import Tool, tool
from toolpacks.core._toolbox import Toolbox
from toolpacks.exceptions import PackError, ToolDefinitionError
from toolpacks.packs._record import LoadedPack, PackInfo, PackSource
from toolpacks.packs.entrypoints._offerings import collect_offerings

if TYPE_CHECKING:  # pluggy and the hook specs are imported when a host makes its manager
    import pluggy

__all__ = [
    "ImplCaller",
    "Registrar",
    "load_pack",
    "new_plugin_manager",
]

logger = logging.getLogger("toolpacks")

_EVENTS = ("before_invoke", "after_invoke", "on_error", "on_yield")
RANKER = "toolpacks_ranker"  # a pack's search ranker (``Toolset.search``)


def new_plugin_manager() -> pluggy.PluginManager:
    """A pluggy manager with the toolpacks hook specifications."""
    import pluggy

    from toolpacks import hookspecs

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


class Registrar:
    """The ``register`` callback handed to a pack's ``register_tools``."""

    def __init__(
        self, pack: str, config: Mapping[str, Any], config_dir: Path | None = None
    ) -> None:
        self.pack = pack
        """The pack registering."""
        self.config: Mapping[str, Any] = config
        """The pack's settings from ``[packs.NAME]`` (empty when none)."""
        self.config_dir = config_dir
        """The directory of the configuration file the settings came from, to resolve
        relative paths in them against (None when the settings came from code)."""
        self.tools: list[Tool] = []
        """Tools registered from code, in order."""
        self.file_tools: list[Tool] = []
        """Tools loaded from registered tools directories."""
        self.problems: list[str] = []
        """Problems with individual file tools."""

    def __call__(self, item: Any, /, **options: Any) -> None:
        """Register a ``Tool``, a typed function, a ``Toolbox`` instance or a tools directory.

        Raises:
            TypeError: ``item`` is none of those.
            ToolDefinitionError: A function cannot be made into a tool.
        """
        alias = options.pop("alias", None)
        if alias is not None and not isinstance(item, Toolbox):
            raise TypeError(
                f"pack {self.pack!r}: alias= names a Toolbox instance; it cannot be used with "
                f"{type(item).__name__}"
            )
        if isinstance(item, Tool):
            if options:
                item = item.replace(**options)
            self.tools.append(item)
        elif isinstance(item, Toolbox):
            if options:
                raise TypeError(
                    f"pack {self.pack!r} registered a {type(item).__name__} with options "
                    f"{', '.join(sorted(options))}; a Toolbox takes only alias= (give its "
                    "methods options with @tool(...))"
                )
            for t in item.tools():
                self.tools.append(t.replace(name=f"{alias}_{t.name}") if alias else t)
        elif isinstance(item, str | Path) and not callable(item):
            from toolpacks.filetools._loader import load_tools_dir

            loaded, problems = load_tools_dir(Path(item))
            self.file_tools.extend(loaded)
            self.problems.extend(problems)
        elif isinstance(item, type):
            raise ToolDefinitionError(
                f"pack {self.pack!r} registered the class {item.__name__}; register an "
                f"instance (register({item.__name__}(...))) or a function"
            )
        elif callable(item):
            self.tools.append(tool(item, **options))
        else:
            raise TypeError(
                f"pack {self.pack!r} registered {type(item).__name__} {item!r}; register a "
                "Tool, a typed function, a Toolbox instance or a tools directory (Path)"
            )


def _import_target(value: str) -> Any:
    module_name, _, attr = value.partition(":")
    obj = importlib.import_module(module_name.strip())
    for part in filter(None, attr.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def _collect(registrar: Registrar, pack: str) -> tuple[dict[str, Tool], list[str]]:
    tools: dict[str, Tool] = {}
    for t in registrar.tools:
        for item in t.walk():
            qualified = f"{pack}.{item.scoped_name}"
            if qualified in tools:
                raise PackError(f"pack {pack!r} registered two tools named {item.scoped_name!r}")
            tools[qualified] = item.replace(pack=pack)
    problems = list(registrar.problems)
    for t in registrar.file_tools:
        qualified = f"{pack}.{t.name}"
        if qualified in tools:
            logger.warning(
                "pack %r: code tool %r overrides the file tool of the same name", pack, t.name
            )
            problems.append(f"file tool {t.name!r} is overridden by the code tool of that name")
            continue
        tools[qualified] = t.replace(pack=pack)
    return tools, problems


@dataclass(frozen=True, slots=True)
class ImplCaller:
    """Calls a hook implementation with only the arguments it declares.

    pluggy lets an implementation accept a subset of its spec's arguments
    (``def before_invoke(tool): ...``); the host calls implementations directly, so it
    passes just those. Two callers of the same function compare equal.
    """

    function: Callable[..., Any]
    """The implementation."""
    argnames: tuple[str, ...]
    """The arguments it accepts."""

    def __call__(self, **kwargs: Any) -> Any:
        """Call the implementation with the keyword arguments it declares."""
        return self.function(**{k: v for k, v in kwargs.items() if k in self.argnames})


def _caller(impl: Any) -> ImplCaller:
    return ImplCaller(impl.function, tuple(impl.argnames) + tuple(impl.kwargnames))


def _check_hooks(pm: pluggy.PluginManager, plugin: object) -> None:
    """Refuse a pack implementing a hook toolpacks does not define (a misspelled name)."""
    unknown = sorted(
        caller.name
        for caller in pm.get_hookcallers(plugin) or []
        if not caller.has_spec()
        and any(i.plugin is plugin and not i.optionalhook for i in caller.get_hookimpls())
    )
    if unknown:
        from toolpacks import hookspecs

        known = sorted(name for name in dir(hookspecs) if hasattr(pm.hook, name))
        raise PackError(
            f"implements unknown hook(s) {', '.join(unknown)}; toolpacks hooks are: "
            f"{', '.join(known)}"
        )


def _impls(pm: pluggy.PluginManager, hook: str, plugin: object) -> list[Any]:
    return [i for i in getattr(pm.hook, hook).get_hookimpls() if i.plugin is plugin]


def _pack_hooks(
    pm: pluggy.PluginManager, plugin: object
) -> tuple[list[GlobalHook], list[Callable[..., Any]]]:
    hooks: list[GlobalHook] = []
    for event in _EVENTS:
        for impl in _impls(pm, event, plugin):
            tags: frozenset[str] = frozenset(getattr(impl.function, "toolpacks_tags", ()))
            hooks.append(GlobalHook(event, _caller(impl), tags))
    authorizers: list[Callable[..., Any]] = [
        _caller(impl) for impl in _impls(pm, "authorize", plugin)
    ]
    return hooks, authorizers


def _plugin_for(pm: pluggy.PluginManager, source: PackSource, registry: dict[str, Any]) -> Any:
    """Import (once) and register with pluggy (once) the code behind ``source``."""
    key = source.base or source.info.name
    if key in registry:
        return registry[key]
    plugin = source.obj if source.obj is not None else _import_target(source.info.module or "")
    if pm.is_registered(plugin):
        # The same object serves two names (an in-process pack added twice): reuse it.
        registry[key] = plugin
        return plugin
    pm.register(plugin, name=key)
    registry[key] = plugin
    return plugin


def load_pack(
    pm: pluggy.PluginManager,
    source: PackSource,
    settings: Mapping[str, Any],
    registry: dict[str, Any],
    secrets: tuple[str, ...] = (),
    config_dir: Path | None = None,
) -> LoadedPack:
    """Import and register one pack; a failure is returned as a ``failed`` pack, not raised.

    Any ``BaseException`` the pack's code raises marks it failed (``SystemExit`` and a
    ``KeyboardInterrupt`` it raised itself included); only a real Ctrl-C (a SIGINT that
    arrived while loading) propagates. ``secrets`` (the values of the pack's secret
    settings) are masked in its failure message and, while ``pm`` lives, in every log record
    of toolpacks and the MCP SDK.
    """
    from dataclasses import replace

    from toolpacks.core._logscrub import remember

    remember(pm, secrets)  # masked in every log record while the host lives
    info = source.info
    started = time.perf_counter()
    try:
        with _RealInterrupts() as interrupts:
            plugin = _plugin_for(pm, source, registry)
            _check_hooks(pm, plugin)
            registrar = Registrar(info.name, settings, config_dir)
            for impl in _impls(pm, "register_tools", plugin):
                _caller(impl)(register=registrar)
            tools, problems = _collect(registrar, info.name)
            hooks, authorizers = _pack_hooks(pm, plugin)
            ranker = next(filter(None, (_caller(i)() for i in _impls(pm, RANKER, plugin))), None)
            offered = collect_offerings(
                lambda hook: [_caller(i) for i in _impls(pm, hook, plugin)],
                info.name, settings, config_dir,
            )
    except KeyboardInterrupt as exc:
        if interrupts.seen:
            raise
        detail = f"KeyboardInterrupt raised by the pack's code: {exc}"
        return _failed(info, detail, started, secrets)
    except BaseException as exc:
        return _failed(info, f"{type(exc).__qualname__}: {exc}", started, secrets)
    elapsed = time.perf_counter() - started
    loaded_info = replace(info, status="loaded", tools=tuple(tools), import_seconds=elapsed)
    loaded = LoadedPack(loaded_info, tools, hooks, authorizers, problems, ranker=ranker)
    loaded.prompts, loaded.resources = offered
    return loaded


def _failed(info: PackInfo, detail: str, started: float, secrets: tuple[str, ...]) -> LoadedPack:
    """The failed pack, its error logged once with ``secrets`` scrubbed from it."""
    from dataclasses import replace

    from toolpacks.core._secrets import scrub

    detail = scrub(detail, secrets)
    logger.warning("%s failed to load: %s", info.describe(), detail)
    return LoadedPack(
        replace(info, status="failed", error=detail, import_seconds=time.perf_counter() - started)
    )


class _RealInterrupts:
    """Tell a real Ctrl-C from a ``KeyboardInterrupt`` that pack code raised itself.

    While loading, SIGINT (in the main thread) goes through a handler that notes it before
    passing it on to the handler in place; in another thread no signal can raise there, so
    any ``KeyboardInterrupt`` is the code's own.
    """

    def __init__(self) -> None:
        self.seen = False
        self._previous: Any = None

    def __enter__(self) -> _RealInterrupts:
        if threading.current_thread() is not threading.main_thread():
            return self
        previous = signal.getsignal(signal.SIGINT)
        if not callable(previous):
            return self  # ignored, or the default action (the process ends): nothing to tell

        def noted(signum: int, frame: FrameType | None) -> Any:
            self.seen = True
            return previous(signum, frame)

        try:
            signal.signal(signal.SIGINT, noted)
        except ValueError:  # not the main interpreter
            return self
        self._previous = previous
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

