"""Messages the host gives when a configuration asks for something it does not define."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolpacks.host.config._load import LoadedConfig

__all__ = ["no_agent_message"]


def no_agent_message(config: LoadedConfig, agent: str) -> str:
    """Why ``agent`` is unknown: where toolpacks looked, the agents there, the closest one."""
    agents = sorted(config.config.agents)
    if config.path is None and config.searched is not None:
        return (
            f"no agent named {agent!r}: no configuration was found in {config.searched} "
            "(looked for toolpacks.toml, then [tool.toolpacks] in pyproject.toml); "
            "create one with an [agents.NAME] table, or pass --config FILE "
            "(Host(config=...)); with no agent, every installed pack is used"
        )
    close = difflib.get_close_matches(agent, agents, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    listed = ", ".join(agents) if agents else "none (add an [agents.NAME] table)"
    return f"{config.source}: no agent named {agent!r}; configured agents: {listed}{hint}"
