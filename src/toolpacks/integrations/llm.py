"""Toolsets in Simon Willison's ``llm``: ``as_tools(toolset)`` and an ``llm`` plugin.

toolpacks declares an entry point in the group ``llm`` that names this module, so once
toolpacks and llm are installed together llm loads it as a plugin. Its ``register_tools``
hook registers the toolset of the agent named by the environment variable
``TOOLPACKS_LLM_AGENT`` (nothing when it is unset), built by a ``Host`` from
``TOOLPACKS_LLM_CONFIG`` (a configuration file, trusted as one passed explicitly) or else from
``toolpacks.toml`` in the working directory (trust rules apply)::

    TOOLPACKS_LLM_AGENT=researcher llm -T files_read 'Summarise README.md'

When the agent cannot be built (unknown agent, untrusted configuration, a pack that failed)
the reason is logged as an error and no toolpacks tool is registered; llm goes on.

Each tool is an ``llm.Tool`` named as the model sees it, with the toolset's JSON Schema, whose
implementation calls ``Toolset.call_sync`` (llm calls tools from synchronous code, and from
inside its event loop for async models): the gate, permissions, approvals, hooks, timeouts and
pinning apply, and llm's tool-call id becomes the toolpacks call id. A successful call returns
the text toolpacks renders; a failed one raises ``ToolError`` with toolpacks' message, which
llm hands to the model as ``Error: <message>``. Each implementation's signature names the
tool's parameters, so ``llm tools list`` shows them. A toolset with deferred tools adds a
``search_tools`` tool (llm sends every tool, deferred ones too, each callable by name).

Approvals are llm's when the toolset has no handler: llm approves a call by letting it reach
the tool (``llm --ta``, or a ``before_call`` that raises ``CancelToolCall`` otherwise). On
llm's command line with ``--ta``/``--tools-approve`` (read from the running command), and with
``as_tools(toolset, llm_approves=True)`` in Python, a call that reaches a tool counts as
approved; otherwise a call toolpacks would ask about is refused with a message naming ``--ta``.

The other direction, installed llm tool plugins as toolpacks packs, is the ``[llm] plugins``
configuration key.
"""

from __future__ import annotations

import copy
import inspect
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

from toolpacks.exceptions import ToolError, ToolpacksError
from toolpacks.host._approval import Approver
from toolpacks.integrations._common import framework_missing, may_ask

if TYPE_CHECKING:
    from collections.abc import Callable

    import llm

    from toolpacks.host._toolset import Toolset

__all__ = ["AGENT_ENV", "CONFIG_ENV", "as_tools", "register_tools"]

AGENT_ENV = "TOOLPACKS_LLM_AGENT"
"""The environment variable naming the agent whose toolset the llm plugin registers."""
CONFIG_ENV = "TOOLPACKS_LLM_CONFIG"
"""The environment variable naming the configuration file (default: the working directory's)."""

logger = logging.getLogger("toolpacks.llm")

hookimpl = pluggy.HookimplMarker("llm")
"""llm's hook marker, made here so that loading the plugin does not import llm."""

_toolsets: dict[tuple[str, str | None, str], Toolset] = {}
_toolsets_lock = threading.Lock()


def as_tools(toolset: Toolset, *, llm_approves: bool | None = None) -> list[llm.Tool]:
    """The toolset's tools as ``llm.Tool`` objects, sorted by name.

    Pass them to llm's Python API (``model.chain(prompt, tools=as_tools(toolset))``). A
    toolset with deferred tools gets ``search_tools`` too.

    Args:
        toolset: The toolset (``Host.toolset(...)`` or ``Toolset([...])``).
        llm_approves: Whether llm approves calls before they reach a tool (a ``before_call``
            of the chain that raises ``llm.CancelToolCall`` for a call the person refuses):
            then, in a toolset without an approval handler, a call toolpacks would ask about
            runs. None (the default): only when llm's command line runs with ``--ta``.

    Raises:
        ImportError: llm is not installed (``pip install 'toolpacks[llm]'``).
    """
    try:
        import llm
    except ImportError as exc:
        raise framework_missing("llm", "llm", exc) from exc
    made = [
        llm.Tool(
            name=definition["name"],
            description=definition["description"],
            input_schema=definition["input_schema"],
            implementation=_implementation(
                toolset, definition["name"], definition["input_schema"], llm_approves
            ),
            plugin="toolpacks",
        )
        for definition in toolset.definitions("neutral", defer=False)
    ]
    from toolpacks.integrations._search import search_toolset

    searching = search_toolset(toolset)  # deferred tools: a search_tools tool finds them
    return made if searching is None else [*made, *as_tools(searching)]


_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}


def _signature(schema: Any) -> inspect.Signature:
    """The parameters of an input schema as a Python signature (what ``llm tools list`` shows).

    Required parameters first, then the others with their default (None when the schema
    gives none), then ``llm_tool_call`` (llm passes the call to a function naming it). A
    name that cannot be a Python parameter keeps a ``**arguments`` catch-all.
    """
    properties = (schema.get("properties") or {}) if isinstance(schema, dict) else {}
    required = set(schema.get("required") or ()) if isinstance(schema, dict) else set()
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    needed: list[inspect.Parameter] = []
    optional: list[inspect.Parameter] = []
    rest = False
    for name, spec in properties.items():
        types = spec.get("type") if isinstance(spec, dict) else None
        annotation = _TYPES.get(types, _EMPTY) if type(types) is str else _EMPTY
        if name == "llm_tool_call":  # llm's own name: the call object goes there
            rest = True
        elif name in required:
            rest |= not _add(needed, name, kind, annotation=annotation)
        else:
            default = spec.get("default") if isinstance(spec, dict) else None
            rest |= not _add(optional, name, kind, default=default, annotation=annotation)
    tail = [inspect.Parameter("llm_tool_call", inspect.Parameter.KEYWORD_ONLY, default=None)]
    if rest:
        tail.append(inspect.Parameter("arguments", inspect.Parameter.VAR_KEYWORD))
    return inspect.Signature([*needed, *optional, *tail])


_EMPTY: Any = inspect.Parameter.empty


def _add(parameters: list[inspect.Parameter], name: str, kind: Any, **details: Any) -> bool:
    """Add the parameter ``name``; False when it cannot be one (a keyword, not a name)."""
    try:
        parameters.append(inspect.Parameter(name, kind, **details))
    except ValueError:
        return False
    return True


def _llm_cli_approves() -> bool:
    """Whether llm's running command asks the person about every tool call (``--ta``)."""
    try:
        import click
    except ImportError:  # pragma: no cover - llm depends on click
        return False
    context = click.get_current_context(silent=True)
    while context is not None:
        if context.params.get("tools_approve") is True:
            return True
        context = context.parent
    return False


def _approve(_: Any) -> bool:
    return True  # llm's own approval came first: the call reached the tool


def _implementation(
    toolset: Toolset, name: str, schema: Any = None, llm_approves: bool | None = None
) -> Callable[..., str]:
    """The function llm calls for the tool ``name``: one ``Toolset.call_sync``."""

    def implementation(llm_tool_call: Any = None, **arguments: Any) -> str:
        call_id = getattr(llm_tool_call, "tool_call_id", None)
        if llm_tool_call is not None:
            arguments = dict(getattr(llm_tool_call, "arguments", None) or arguments)
        target = toolset
        asks = toolset.approver.handler is None and may_ask(toolset, name)
        approves = _llm_cli_approves() if llm_approves is None else llm_approves
        if asks and approves:  # llm asked the person, who approved: this call runs
            target = copy.copy(toolset)
            target.approver = Approver(_approve, toolset.approver.always)
        result = target.call_sync(name, arguments, call_id=call_id)
        if result.is_error:
            message = result.content
            if asks and not approves and result.error and result.error.kind == "denied":
                message += (
                    " To approve calls from llm, run it with --ta (--tools-approve): llm then"
                    " asks you about each call; or give the toolpacks host an approval handler."
                )
            raise ToolError(message)
        return result.content

    implementation.__name__ = name
    implementation.__signature__ = _signature(schema or {})  # type: ignore[attr-defined]
    return implementation


def agent_toolset(environ: Any = None) -> Toolset | None:
    """The toolset ``TOOLPACKS_LLM_AGENT`` names, built once per agent, file and directory.

    Args:
        environ: The environment (default ``os.environ``).

    Returns:
        The toolset, or None when the variable is unset or empty.

    Raises:
        ToolpacksError: The configuration or the agent is invalid, untrusted or unknown, or a
            pack it names failed to load.
    """
    env = os.environ if environ is None else environ
    agent = env.get(AGENT_ENV, "").strip()
    if not agent:
        return None
    config = env.get(CONFIG_ENV, "").strip() or None
    key = (agent, config, str(Path.cwd()))
    with _toolsets_lock:
        found = _toolsets.get(key)
        if found is None:
            from toolpacks.host._host import Host

            host = Host(config=config)
            found = _toolsets[key] = host.toolset(agent)
        return found


@hookimpl
def register_tools(register: Callable[..., None]) -> None:
    """The llm hook: register the tools of the agent ``TOOLPACKS_LLM_AGENT`` names.

    Nothing is registered when the variable is unset; when the toolset cannot be built, the
    reason is logged as an error.
    """
    try:
        toolset = agent_toolset()
    except ToolpacksError as exc:
        logger.error(
            "toolpacks: no tools registered for %s=%r: %s",
            AGENT_ENV,
            os.environ.get(AGENT_ENV),
            exc,
        )
        return
    if toolset is None:
        return
    for made in as_tools(toolset):
        register(made)
