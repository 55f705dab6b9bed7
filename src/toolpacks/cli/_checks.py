"""``toolpacks doctor``'s checks of what the configuration names: agents, packs, tags, tools.

A typo in a configuration rarely fails loudly: ``include_tags = ["raed"]`` gives an empty
toolset, ``exclude = ["clock.nwo"]`` excludes nothing. These checks find names that match
nothing and suggest the close ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Literal

from toolpacks.cli._errors import counted, did_you_mean

if TYPE_CHECKING:
    from toolpacks.core._tool import Tool
    from toolpacks.host._host import Host

__all__ = ["agent_findings", "allowed_agent_findings", "unknown_packs", "with_hint"]

Add = Callable[[Literal["error", "warning", "info"], str, str], None]
"""``Report.add``: level, topic, message."""


def with_hint(message: str, word: str, candidates: Iterable[str]) -> str:
    """``message``, with ``; did you mean ...?`` when ``word`` has close matches."""
    hint = did_you_mean(word, candidates)
    return f"{message}; {hint}" if hint else message


def _listed(values: Iterable[str]) -> str:
    return ", ".join(repr(v) for v in sorted(values)) or "none"


def wanted_packs(agent_config: Any) -> list[str]:
    """The pack names an agent's table lists (``packs`` and ``optional_packs``)."""
    return [*agent_config.packs, *getattr(agent_config, "optional_packs", ())]


def unknown_packs(host: Host, agent_config: Any) -> list[str]:
    """The packs an agent names that the host does not know, each with a suggestion."""
    known = [p.name for p in host.packs]
    return [
        with_hint(f"no pack is named {name!r}", name, known)
        for name in wanted_packs(agent_config)
        if name != "*" and name not in known
    ]


def _agent_tools(host: Host, agent_config: Any) -> dict[str, Tool]:
    """Every tool of the packs the agent selects that loaded, before any filter."""
    known = [p.name for p in host.packs]
    wanted = wanted_packs(agent_config)
    names = known if "*" in wanted else [n for n in wanted if n in known]
    tools: dict[str, Tool] = {}
    for name in names:
        loaded = host.load(name)
        if loaded.info.status == "loaded":
            tools.update(loaded.tools)
    return tools


def agent_findings(
    host: Host, agent: str, agent_config: Any, tool_count: int | None, add: Add
) -> None:
    """Check one configured agent's filters and the size of its toolset.

    Args:
        host: The host (packs are loaded as needed).
        agent: The agent's name.
        agent_config: Its ``AgentConfig``.
        tool_count: How many tools its toolset has (None when it could not be built).
        add: Records a finding.
    """
    topic = f"agent {agent}"
    tools = _agent_tools(host, agent_config)
    tags = {tag for t in tools.values() for tag in t.tags}
    if tools and tool_count is not None:  # a failed build already said what it refused
        for key in ("include_tags", "exclude_tags"):
            for tag in getattr(agent_config, key):
                if tag not in tags:
                    add(
                        "warning",
                        topic,
                        with_hint(
                            f"{key} entry {tag!r} matches no tool of the agent's packs "
                            f"(their tags: {_listed(tags)})",
                            tag,
                            tags,
                        ),
                    )
    for qualified in agent_config.exclude:
        if qualified not in tools and not any(fnmatchcase(q, qualified) for q in tools):
            add(
                "warning",
                topic,
                with_hint(
                    f"exclude entry {qualified!r} matches no tool of the agent's packs",
                    qualified,
                    tools,
                ),
            )
    if tool_count == 0:
        add("error", topic, _why_empty(agent_config, tools, tags))


def _why_empty(agent_config: Any, tools: dict[str, Tool], tags: set[str]) -> str:
    message = "the agent's toolset has no tools"
    if not tools:
        return f"{message}: none of its packs ({_listed(wanted_packs(agent_config))}) has a tool"
    if agent_config.include_tags and tags.isdisjoint(agent_config.include_tags):
        return (
            f"{message}: include_tags = {list(agent_config.include_tags)} matches none of "
            f"its packs' tags ({_listed(tags)})"
        )
    left = counted(len(tools), "tool")
    return f"{message}: include_tags, exclude_tags and exclude leave none of {left}"


def allowed_agent_findings(host: Host, agents: Sequence[str], add: Add) -> None:
    """Tools allowed only to agents no configuration defines (a typo in ``allowed_agents``)."""
    if not agents:
        return
    for info in host.packs:
        if info.status != "loaded":
            continue
        for qualified, t in host.load(info.name).tools.items():
            if t.allowed_agents is None:
                continue
            for name in sorted(set(t.allowed_agents) - set(agents)):
                add(
                    "warning",
                    f"pack {info.name}",
                    with_hint(
                        f"tool {qualified!r} is allowed to agent {name!r}, which no "
                        f"configuration defines (agents: {_listed(agents)})",
                        name,
                        agents,
                    ),
                )
