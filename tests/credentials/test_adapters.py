"""Credentials through agent-framework adapters: resolved by the toolset, never skipped."""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from toolpacks import ToolContext, tool
from toolpacks.host.credentials._store import SqliteCredentialStore
from toolpacks.testing import make_host

CONFIG = {"credentials": {"github": {"kind": "secret"}}}


@tool(credentials=["github"])
def whoami(ctx: ToolContext) -> str:
    """Say which GitHub token the call received."""
    return f"token={ctx.credential('github')}"


def test_pydantic_ai_without_a_principal_fails_closed(pack_of: Any) -> None:
    """The adapter's fast road is not taken for a credentialed tool.

    With no principal the model is told the call has none, and no stored value reaches it.
    """
    from toolpacks.integrations.pydantic_ai import as_toolset

    SqliteCredentialStore().set("github", "alice", "ghp_alice_secret_value_1")
    toolset = make_host(pack_of(whoami), names=["gh"], config=CONFIG).toolset()
    seen: list[list[ModelMessage]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        if len(seen) == 1:
            return ModelResponse(parts=[ToolCallPart("whoami", {}, tool_call_id="c1")])
        return ModelResponse(parts=[TextPart("done")])

    Agent(FunctionModel(respond), toolsets=[as_toolset(toolset)]).run_sync("hi")
    sent = repr(seen[-1])
    assert "no principal" in sent
    assert "ghp_alice" not in sent
