"""Building the toolset a command needs, with errors that say what to do on the command line."""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from toolpacks.cli._errors import CliError, did_you_mean

if TYPE_CHECKING:
    from toolpacks.host._approval import ApprovalHandler
    from toolpacks.host._host import Host
    from toolpacks.host._toolset import Toolset

__all__ = [
    "build_toolset",
    "check_agent",
    "code_host",
    "make_host",
    "pack_names",
    "unknown_pack",
]


def make_host(args: argparse.Namespace, approval: ApprovalHandler | None = None) -> Host:
    """The host for ``--config`` (or the configuration found in the working directory)."""
    from toolpacks.host._host import Host

    return Host(args.config, approval=approval)


def code_host(args: argparse.Namespace) -> Host:
    """``make_host``, for a command that imports packs: refused as building a toolset is.

    ``list --tools``, ``show`` and ``lock`` run pack code with the configuration's
    ``[packs.NAME]`` settings; an implicit configuration that needs trust and lacks it stops
    them before any pack is imported, with the same message ``toolset`` gives.

    Raises:
        UntrustedConfigError: The configuration found here needs ``toolpacks trust``.
    """
    host = make_host(args)
    try:
        host.check_trusted()
    except BaseException:
        host.close()
        raise
    return host


def pack_names(host: Host) -> list[str]:
    """Every pack the host knows, by name."""
    return [p.name for p in host.packs]


def unknown_pack(name: str, host: Host, what: str = "pack") -> CliError:
    """The error for a pack (or ``pack.tool``) that no pack provides, with suggestions."""
    _, dot, rest = name.partition(".")
    hint = did_you_mean(name, [f"{n}{dot}{rest}" for n in pack_names(host)])
    return CliError(
        f"no {what} named {name!r}; try `toolpacks list --tools`", *filter(None, [hint])
    )


def check_agent(host: Host, agent: str | None) -> None:
    """Fail early, with a suggestion, when ``agent`` is not a configured agent.

    Raises:
        ConfigError: The host's error, with a did-you-mean note when a name is close.
    """
    from toolpacks.exceptions import ConfigError

    if agent is None:
        return
    try:
        host.agent_config(agent)
    except ConfigError as exc:
        hint = did_you_mean(agent, host.config.config.agents)
        if hint is not None:
            exc.add_note(hint)
        raise


def _conflict_hints(command: str) -> list[str]:
    example = {
        "call": "`toolpacks call PACK.TOOL` (a qualified name) uses that pack alone",
        "toolset": "`toolpacks toolset AGENT` builds an agent's toolset",
        "serve": "`toolpacks serve --agent AGENT` serves an agent's toolset",
    }.get(command, "name an agent with --agent")
    return [
        example,
        'an agent\'s [agents.NAME] table resolves a clash: on_conflict = "prefix", '
        '"first" or "priority", rename = {...} or exclude = [...]',
    ]


@contextmanager
def toolset_errors(agent: str | None, command: str) -> Iterator[None]:
    """Turn a tool-name conflict in the no-agent toolset into advice for the command line.

    The host's message tells a library caller to edit "the agent's table"; with no agent
    named, the user needs an agent (or a qualified name) instead.
    """
    from toolpacks.exceptions import ToolConflictError

    try:
        yield
    except ToolConflictError as exc:
        if agent is not None:
            raise
        text = str(exc)
        head, sep, _ = text.partition(" Resolve it in ")
        message = f"{head} (every installed pack is used when no agent is named)" if sep else text
        raise CliError(message, *_conflict_hints(command)) from exc


def build_toolset(
    host: Host,
    agent: str | None,
    command: str,
    *,
    packs: Sequence[str] | None = None,
    **options: Any,
) -> Toolset:
    """``host.toolset(agent, packs=packs, **options)`` with command-line errors.

    Raises:
        ConfigError: Unknown agent (with a suggestion), or invalid configuration.
        PackError: A pack the agent (or ``packs``) names failed to load.
        UntrustedConfigError: The configuration found here needs ``toolpacks trust``.
        CliError: Tool names clash and no agent was named.
    """
    check_agent(host, agent)
    with toolset_errors(agent, command):
        return host.toolset(agent, packs=packs, **options)
