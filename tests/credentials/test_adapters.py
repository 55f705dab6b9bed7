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


ALICE_TOKEN, BOB_TOKEN = "ghp_alice_secret_value_1", "ghp_bob_secret_value_22"


def _two_principals_toolset(pack_of: Any) -> Any:
    """A toolset with ``whoami``; alice's and bob's tokens stored, carol's not."""
    store = SqliteCredentialStore()
    store.set("github", "alice", ALICE_TOKEN)
    store.set("github", "bob", BOB_TOKEN)
    return make_host(pack_of(whoami), names=["gh"], config=CONFIG).toolset()


def _pydantic_answer(toolset: Any, deps: Any) -> str:
    """What the model is sent back after calling ``whoami`` in a run with ``deps``."""
    from pydantic_ai.messages import ToolReturnPart

    from toolpacks.integrations.pydantic_ai import as_toolset

    answers: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not answers and len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("whoami", {}, tool_call_id="c1")])
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                answers.append(str(part.content))
            else:
                answers.append(str(getattr(part, "content", "")))
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(respond), toolsets=[as_toolset(toolset)], deps_type=object)
    agent.run_sync("hi", deps=deps)
    return "\n".join(answers)


def test_pydantic_ai_two_principals_each_get_their_own_value(pack_of: Any) -> None:
    """Alice's run gets alice's token, bob's bob's; carol is told how to connect, and nothing.

    The principal comes from the run's ``deps`` (pydantic-ai's ``RunContext.deps``), through a
    real ``Agent`` loop with a ``FunctionModel``; the same toolset serves all three runs.
    """
    from toolpacks import Principal

    toolset = _two_principals_toolset(pack_of)
    alice = _pydantic_answer(toolset, Principal("alice"))
    bob = _pydantic_answer(toolset, ToolContext(principal=Principal("bob")))
    carol = _pydantic_answer(toolset, {"principal": Principal("carol")})
    assert alice == f"token={ALICE_TOKEN}"
    assert bob == f"token={BOB_TOKEN}"
    assert "toolpacks credentials set github --subject carol" in carol
    assert "ghp_" not in carol
    assert ALICE_TOKEN not in carol
    assert BOB_TOKEN not in carol


def test_langchain_two_principals_each_get_their_own_value(pack_of: Any, run: Any) -> None:
    """The same with langchain: the principal in ``config["configurable"]["principal"]``.

    ``BaseTool.invoke`` and ``ainvoke`` (the roads a langchain agent takes), alice and bob on
    the same tool object, carol told how to connect and given neither value.
    """
    from toolpacks import Principal
    from toolpacks.integrations.langchain import as_tools

    lc = {t.name: t for t in as_tools(_two_principals_toolset(pack_of))}["whoami"]
    call = {"name": "whoami", "args": {}, "id": "c1", "type": "tool_call"}

    def config(subject: str) -> dict[str, Any]:
        return {"configurable": {"principal": Principal(subject)}}

    assert lc.invoke(call, config("alice")).content == f"token={ALICE_TOKEN}"
    assert lc.invoke(call, config("bob")).content == f"token={BOB_TOKEN}"
    assert run(lc.ainvoke(call, config("bob"))).content == f"token={BOB_TOKEN}"
    assert run(lc.ainvoke(call, config("alice"))).content == f"token={ALICE_TOKEN}"
    carol = str(lc.invoke(call, config("carol")).content)
    assert "toolpacks credentials set github --subject carol" in carol
    assert "ghp_" not in carol
    nobody = str(lc.invoke(call).content)
    assert "no principal" in nobody
    assert "ghp_" not in nobody
