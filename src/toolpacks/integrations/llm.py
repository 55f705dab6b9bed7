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
llm hands to the model as ``Error: <message>``.

The other direction, installed llm tool plugins as toolpacks packs, is the ``[llm] plugins``
configuration key.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

from toolpacks.exceptions import ToolError, ToolpacksError
from toolpacks.integrations._common import framework_missing

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


def as_tools(toolset: Toolset) -> list[llm.Tool]:
    """The toolset's tools as ``llm.Tool`` objects, sorted by name.

    Pass them to llm's Python API (``model.chain(prompt, tools=as_tools(toolset))``).

    Args:
        toolset: The toolset (``Host.toolset(...)`` or ``Toolset([...])``).

    Raises:
        ImportError: llm is not installed (``pip install 'toolpacks[llm]'``).
    """
    try:
        import llm
    except ImportError as exc:
        raise framework_missing("llm", "llm", exc) from exc
    return [
        llm.Tool(
            name=definition["name"],
            description=definition["description"],
            input_schema=definition["input_schema"],
            implementation=_implementation(toolset, definition["name"]),
            plugin="toolpacks",
        )
        for definition in toolset.definitions("neutral", defer=False)
    ]


def _implementation(toolset: Toolset, name: str) -> Callable[..., str]:
    """The function llm calls for the tool ``name``: one ``Toolset.call_sync``."""

    def implementation(llm_tool_call: Any = None, **arguments: Any) -> str:
        call_id = getattr(llm_tool_call, "tool_call_id", None)
        if llm_tool_call is not None:
            arguments = dict(getattr(llm_tool_call, "arguments", None) or arguments)
        result = toolset.call_sync(name, arguments, call_id=call_id)
        if result.is_error:
            raise ToolError(result.content)
        return result.content

    implementation.__name__ = name
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
