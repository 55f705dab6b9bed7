"""Installed ``llm`` tool plugins as packs: ``[llm] plugins = [...]`` in the configuration.

An ``llm`` plugin is a distribution with an entry point in the group ``llm`` whose module
implements llm's ``register_tools(register)`` hook. Each plugin the configuration names (by
entry-point name, or by distribution name for all of that distribution's entry points;
``"*"`` for every one) becomes a pack of source ``llm`` named after its entry point.

Finding plugins reads distribution metadata only; a plugin's module (and ``llm`` itself) is
imported when a toolset first uses its pack. What it registers is wrapped the way llm itself
would: a function becomes ``llm.Tool.function(fn)``, whose input schema llm generates; an
``llm.Tool`` is taken as it is; an ``llm.Toolbox`` class is instantiated (constructor
arguments from ``[packs.NAME.<Toolbox name>]``), prepared, and each of its tools wrapped.
Every one becomes a toolpacks ``Tool`` validated against llm's schema and called like any
other, so the gate, hooks, permissions and approvals apply.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import inspect
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolpacks.core._tool import Tool
from toolpacks.core.define._names import safe_name
from toolpacks.exceptions import ConfigError, PackError
from toolpacks.hookspecs import hookimpl
from toolpacks.packs._record import PackInfo, PackSource, SourceKind
from toolpacks.packs.entrypoints._discovery import normalize
from toolpacks.packs.entrypoints._loading import Registrar

if TYPE_CHECKING:
    import llm

__all__ = ["LLM_GROUP", "LlmPlugin", "LlmPluginPack", "find_plugins", "llm_sources"]

logger = logging.getLogger("toolpacks")

LLM_GROUP = "llm"
"""The entry-point group ``llm`` plugins declare."""

_SOURCE: SourceKind = "llm"
_KEY = "llm.plugins"
_UNTYPED = inspect.Signature([inspect.Parameter("arguments", inspect.Parameter.VAR_KEYWORD)])
_INSTALL = "install llm with `pip install 'toolpacks[llm]'`"


@dataclass(frozen=True, slots=True)
class LlmPlugin:
    """One entry point of the group ``llm``, known from metadata alone."""

    name: str
    """The entry point's name: the pack's name."""
    value: str
    """The module it names (``module`` or ``module:attr``)."""
    dist_name: str
    """The distribution's PEP 503-normalized name."""
    dist_version: str
    """The distribution's version."""

    @property
    def is_toolpacks(self) -> bool:
        """Whether this is toolpacks' own ``llm`` entry point (it serves toolsets to llm)."""
        return self.value.partition(":")[0].strip().split(".")[0] == "toolpacks"

    def describe(self) -> str:
        """``'tools_simpleeval' (llm-tools-simpleeval 0.1.1)``, for messages."""
        return f"{self.name!r} ({self.dist_name} {self.dist_version})"


def find_plugins(path: Sequence[str] | None = None) -> list[LlmPlugin]:
    """Every ``llm`` entry point installed on ``path`` (default ``sys.path``), by name.

    Only metadata is read. A distribution found again later on the path is shadowed, as in
    ``importlib.metadata``.
    """
    from importlib import metadata

    dists = (
        metadata.distributions(path=list(path)) if path is not None else metadata.distributions()
    )
    seen: set[str] = set()
    found: list[LlmPlugin] = []
    for dist in dists:
        dist_name = normalize(dist.metadata["Name"] or "")
        if not dist_name or dist_name in seen:
            continue
        seen.add(dist_name)
        version = dist.version or "unknown"
        for ep in dist.entry_points:
            if ep.group == LLM_GROUP:
                found.append(LlmPlugin(ep.name, ep.value, dist_name, version))
    return sorted(found, key=lambda p: (p.name, p.dist_name))


def _unknown(name: str, found: Sequence[LlmPlugin]) -> ConfigError:
    choices = sorted({p.name for p in found} | {p.dist_name for p in found})
    close = difflib.get_close_matches(name, choices, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    listed = ", ".join(p.describe() for p in found) or "none"
    return ConfigError(
        f"{_KEY}: no installed llm plugin is named {name!r} (names are entry-point names in "
        f"the group 'llm', or distribution names); installed llm plugins: {listed}{hint}"
    )


def select_plugins(
    requested: Sequence[str], found: Sequence[LlmPlugin]
) -> tuple[list[LlmPlugin], set[str]]:
    """The plugins ``requested`` names, and the entry-point names it named explicitly.

    Raises:
        ConfigError: A name is no installed plugin (with a did-you-mean), or names
            toolpacks' own ``llm`` entry point.
    """
    wanted = [p for p in found if not p.is_toolpacks] if "*" in requested else []
    explicit: set[str] = set()
    for name in requested:
        if name == "*":
            continue
        matches = [p for p in found if p.name == name] or [
            p for p in found if p.dist_name == normalize(name)
        ]
        if not matches:
            raise _unknown(name, [p for p in found if not p.is_toolpacks])
        if any(p.is_toolpacks for p in matches):
            raise ConfigError(
                f"{_KEY}: {name!r} is toolpacks' own llm entry point, which serves toolsets "
                "to llm; it cannot be mounted back into toolpacks as a pack"
            )
        explicit.update(p.name for p in matches)
        wanted.extend(matches)
    return list(dict.fromkeys(wanted)), explicit


def llm_sources(
    requested: Sequence[str],
    path: Sequence[str] | None,
    taken: Mapping[str, PackSource],
    settings: Mapping[str, Mapping[str, Any]],
) -> tuple[dict[str, PackSource], list[str]]:
    """The packs ``[llm] plugins = requested`` makes, and problems with skipped plugins.

    Args:
        requested: The configured names (``"*"`` for all).
        path: Where to look (default ``sys.path``).
        taken: Packs already known (installed toolpacks packs), whose names are taken.
        settings: ``[packs.NAME]`` tables by pack name.

    Returns:
        Pack name to source (nothing imported), and one message per plugin ``"*"`` left out.

    Raises:
        ConfigError: A name is unknown, or a plugin named explicitly cannot be a pack (its
            name is taken, invalid, or declared by two distributions).
    """
    if not requested:
        return {}, []
    found = find_plugins(path)
    selected, explicit = select_plugins(requested, found)
    by_name: dict[str, list[LlmPlugin]] = {}
    for plugin in selected:
        by_name.setdefault(plugin.name, []).append(plugin)
    sources: dict[str, PackSource] = {}
    problems: list[str] = []
    for name, plugins in by_name.items():
        plugin = plugins[0]
        problem = None
        if len(plugins) > 1:
            dists = ", ".join(f"{p.dist_name} {p.dist_version}" for p in plugins)
            problem = f"llm plugin name {name!r} is declared by several distributions ({dists})"
        elif name in taken:
            problem = (
                f"llm plugin {plugin.describe()} has the name of {taken[name].info.describe()}"
            )
        elif not name or "." in name or safe_name(name) != name:
            problem = f"llm plugin {plugin.describe()} has a name that is not a valid pack name"
        if problem is not None:
            if name in explicit:
                raise ConfigError(f"{_KEY}: {problem}; it cannot be mounted as a pack")
            problems.append(f"{_KEY} = ['*']: {problem}; it was left out")
            logger.warning("%s: %s; it was left out", _KEY, problem)
            continue
        info = PackInfo(
            name, plugin.dist_name, plugin.dist_version, plugin.value, "available", source=_SOURCE
        )
        sources[name] = PackSource(info, LlmPluginPack(plugin), settings.get(name, {}))
    return sources, problems


class LlmPluginPack:
    """The toolpacks pack behind one ``llm`` plugin: imports it when its tools are needed."""

    def __init__(self, plugin: LlmPlugin) -> None:
        self.plugin = plugin
        """The entry point this pack mounts."""

    def __repr__(self) -> str:
        return f"<llm plugin {self.plugin.describe()}>"

    @hookimpl
    def register_tools(self, register: Registrar) -> None:
        """Import the plugin, run its ``register_tools`` hook and register each tool."""
        tools, problems = load_llm_tools(self.plugin, register.config)
        register.problems.extend(problems)
        for t in tools:
            register(t)


def _require_llm() -> None:
    try:
        import llm  # noqa: F401
    except ImportError as exc:
        raise PackError(f"llm plugins need the llm package ({exc}); {_INSTALL}") from None


def registered_items(plugin: LlmPlugin) -> list[tuple[Any, str | None]]:
    """What the plugin's ``register_tools`` hook registers, as ``(item, name)`` pairs.

    The plugin runs under a plugin manager of its own (llm's hook specifications), so llm's
    global plugin state is left alone.
    """
    import pluggy

    _require_llm()
    from llm import hookspecs as llm_hookspecs

    module_name, _, attr = plugin.value.partition(":")
    target: Any = importlib.import_module(module_name.strip())
    for part in filter(None, attr.strip().split(".")):
        target = getattr(target, part)
    pm = pluggy.PluginManager(LLM_GROUP)
    pm.add_hookspecs(llm_hookspecs)
    pm.register(target, name=plugin.name)
    items: list[tuple[Any, str | None]] = []

    def register(item: Any, name: str | None = None) -> None:
        items.append((item, name))

    pm.hook.register_tools(register=register)
    return items


def load_llm_tools(plugin: LlmPlugin, settings: Mapping[str, Any]) -> tuple[list[Tool], list[str]]:
    """The plugin's tools as toolpacks tools, and problems with the ones left out.

    Args:
        plugin: The entry point.
        settings: The pack's ``[packs.NAME]`` table: one table of constructor arguments per
            Toolbox, under the Toolbox's registered name.

    Raises:
        PackError: llm is not installed.
        TypeError: The plugin registered a class that is not an ``llm.Toolbox``.
    """
    _require_llm()
    import llm

    llm_tools: list[llm.Tool] = []
    problems: list[str] = []
    toolboxes: set[str] = set()
    for item, name in registered_items(plugin):
        if inspect.isclass(item):
            if not issubclass(item, llm.Toolbox):
                raise TypeError(
                    f"llm plugin {plugin.describe()} registered the class {item.__name__}, "
                    "which is not an llm.Toolbox subclass"
                )
            box_name = name or item.__name__
            toolboxes.add(box_name)
            box_tools, problem = _toolbox_tools(item, box_name, settings.get(box_name, {}))
            llm_tools.extend(box_tools)
            problems.extend([problem] if problem else [])
        elif isinstance(item, llm.Tool):
            llm_tools.append(dataclasses.replace(item, name=name or item.name))
        else:
            from_function: Any = llm.Tool.function  # llm's schema generation (untyped)
            llm_tools.append(from_function(item, name=name))
    for key in sorted(set(settings) - toolboxes):
        problems.append(
            f"setting {key!r} names no Toolbox of llm plugin {plugin.describe()} "
            f"(its Toolboxes: {', '.join(sorted(toolboxes)) or 'none'})"
        )
    tools: list[Tool] = []
    for llm_tool in llm_tools:
        made, problem = _wrap(llm_tool, plugin)
        tools.extend([made] if made is not None else [])
        problems.extend([problem] if problem else [])
    for problem in problems:
        logger.warning("pack %r: %s", plugin.name, problem)
    return tools, problems


def _toolbox_tools(
    cls: type[llm.Toolbox], name: str, arguments: Any
) -> tuple[list[llm.Tool], str | None]:
    """The tools of one configured, prepared instance of ``cls``; or why there are none."""
    if not isinstance(arguments, Mapping):
        return [], f"Toolbox {name!r}: its settings must be a table of constructor arguments"
    try:
        box = cls(**arguments)
        if not getattr(box, "_prepared", False):
            prepare: Any = box.prepare  # llm's own methods are untyped
            prepare()
            box._prepared = True
        return list(box.tools()), None
    except Exception as exc:
        return [], (
            f"Toolbox {name!r} was left out: {type(exc).__name__}: {exc} (give its constructor "
            f"arguments in a [packs.<pack>.{name}] table)"
        )


def _wrap(llm_tool: llm.Tool, plugin: LlmPlugin) -> tuple[Tool | None, str | None]:
    """A toolpacks ``Tool`` calling ``llm_tool``, with llm's schema; or why not."""
    implementation = llm_tool.implementation
    if implementation is None:
        return None, f"tool {llm_tool.name!r} has no implementation and was left out"
    name = safe_name(llm_tool.name)
    if name.startswith("-"):
        name = "_" + name[1:]
    problem = None
    if name != llm_tool.name:
        problem = f"tool {llm_tool.name!r} is named {name!r} (not a valid tool name)"
    call_type: type[_LlmCall | _AsyncLlmCall] = (
        _AsyncLlmCall if inspect.iscoroutinefunction(implementation) else _LlmCall
    )
    description = inspect.cleandoc(llm_tool.description or "") or name
    schema = dict(llm_tool.input_schema) or {"type": "object", "properties": {}}
    schema.pop("title", None)
    made = Tool(
        call_type(llm_tool, plugin.name), name=name, description=description, input_schema=schema
    )
    return made, problem


def _accepts_tool_call(implementation: Any) -> bool:
    try:
        return "llm_tool_call" in inspect.signature(implementation).parameters
    except (TypeError, ValueError):
        return False


class _LlmCallBase:
    """Calls an llm tool's implementation as llm would (``llm_tool_call`` when it asks)."""

    # No annotations, so ``Tool`` validates arguments against llm's JSON Schema.
    __signature__ = _UNTYPED

    def __init__(self, llm_tool: llm.Tool, pack: str) -> None:
        self.llm_tool = llm_tool
        self.__name__ = llm_tool.name
        self.__qualname__ = f"llm:{pack}.{llm_tool.name}"
        self.__doc__ = llm_tool.description

    def _arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        if _accepts_tool_call(self.llm_tool.implementation):
            import llm

            call = llm.ToolCall(name=self.llm_tool.name, arguments=dict(arguments))
            return {**arguments, "llm_tool_call": call}
        return arguments


class _LlmCall(_LlmCallBase):
    """The function behind a wrapped llm tool."""

    def __call__(self, **arguments: Any) -> Any:
        implementation: Any = self.llm_tool.implementation
        return _output(implementation(**self._arguments(arguments)))


class _AsyncLlmCall(_LlmCallBase):
    """The coroutine behind a wrapped async llm tool."""

    async def __call__(self, **arguments: Any) -> Any:
        implementation: Any = self.llm_tool.implementation
        return _output(await implementation(**self._arguments(arguments)))


def _output(result: Any) -> Any:
    """The value of an llm tool's result: ``ToolOutput.output`` (attachments are dropped)."""
    import llm

    if isinstance(result, llm.ToolOutput):
        if result.attachments:
            logger.info("llm tool output attachments are not passed on by toolpacks")
        return result.output
    return result
