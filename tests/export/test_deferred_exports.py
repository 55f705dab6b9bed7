"""Deferred tools per provider: shapes checked against the official SDK types, round trips.

A toolset of three packs (``crm``, ``files``, ``clock``) where ``crm`` and ``files`` are
deferred: what goes up front, how each provider's tool search is answered through
``Toolset.execute``, and that a found tool is then called by name.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, get_type_hints

import pytest
from pydantic import TypeAdapter

from toolpacks import Toolset, tool
from toolpacks.exceptions import ExportError
from toolpacks.host._toolset import ToolEntry


@tool
def get_customer(customer_id: str) -> str:
    """Look up a customer record in the CRM by its id."""
    return f"customer {customer_id}: Ada"


@tool
def list_invoices(customer_id: str) -> str:
    """List the invoices sent to a customer."""
    return f"invoices of {customer_id}: none"


@tool
def read_file(path: str) -> str:
    """Read a text file from the disk."""
    return f"text of {path}"


@tool
def now() -> str:
    """The current time."""
    return "noon"


def _toolset() -> Toolset:
    def entry(t: Any, pack: str, deferred: bool) -> ToolEntry:
        return ToolEntry(t.name, f"{pack}.{t.name}", pack, t, deferred=deferred)

    return Toolset(
        [
            entry(get_customer, "crm", True),
            entry(list_invoices, "crm", True),
            entry(read_file, "files", True),
            entry(now, "clock", False),
        ]
    )


def keys_of(typed_dict: type) -> set[str]:
    return set(get_type_hints(typed_dict))


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- OpenAI Responses ---------------------------------------------------------------------------


def test_responses_namespaces_defer_loading_and_a_client_tool_search() -> None:
    from openai.types.responses import NamespaceToolParam, ToolParam, ToolSearchToolParam
    from openai.types.responses.namespace_tool_param import ToolFunction

    out = _toolset().definitions("openai-responses")
    for d in out:
        TypeAdapter(ToolParam).validate_python(d)
    spaces = {d["name"]: d for d in out if d["type"] == "namespace"}
    assert set(spaces) == {"crm", "files", "clock"}
    for space in spaces.values():
        assert set(space) <= keys_of(NamespaceToolParam)
        assert space["description"]
        for fn in space["tools"]:
            assert set(fn) <= keys_of(ToolFunction)
    crm = {f["name"]: f for f in spaces["crm"]["tools"]}
    assert crm["get_customer"]["defer_loading"] is True
    assert "defer_loading" not in spaces["clock"]["tools"][0]
    search = out[-1]
    assert set(search) <= keys_of(ToolSearchToolParam)
    assert search["type"] == "tool_search"
    assert search["execution"] == "client"
    assert search["parameters"]["required"] == ["query"]


def test_responses_server_tool_search() -> None:
    out = _toolset().definitions("openai-responses", tool_search="server")
    assert out[-1] == {"type": "tool_search", "execution": "server"}


def test_responses_round_trip_client_search_then_the_found_tool() -> None:
    """A scripted ``tool_search_call`` is answered, then the found (deferred) tool is called."""
    from openai.types.responses import ResponseFunctionToolCall, ResponseToolSearchCall
    from openai.types.responses.response_input_item_param import FunctionCallOutput
    from openai.types.responses.response_tool_search_output_item_param_param import (
        ResponseToolSearchOutputItemParamParam,
    )

    toolset = _toolset()
    search_call = ResponseToolSearchCall(
        id="ts_1",
        call_id="call_s1",
        type="tool_search_call",
        execution="client",
        status="completed",
        arguments={"query": "look up a customer in the crm"},
    )
    answers = run(toolset.execute({"output": [search_call]}, "openai-responses"))
    assert len(answers) == 1
    output = answers[0]
    TypeAdapter(ResponseToolSearchOutputItemParamParam).validate_python(output)
    assert output["type"] == "tool_search_output"
    assert output["call_id"] == "call_s1"
    assert output["execution"] == "client"
    found = [f["name"] for space in output["tools"] for f in space["tools"]]
    assert found[0] == "get_customer"
    assert all(name in toolset.deferred for name in found)
    assert output["tools"][0]["type"] == "namespace"

    call = ResponseFunctionToolCall(
        type="function_call",
        call_id="call_f1",
        name="get_customer",
        namespace="crm",
        arguments=json.dumps({"customer_id": "c7"}),
    )
    [result] = run(toolset.execute({"output": [call]}, "openai-responses"))
    TypeAdapter(FunctionCallOutput).validate_python(result)
    assert result == {
        "type": "function_call_output",
        "call_id": "call_f1",
        "output": "customer c7: Ada",
    }


def test_responses_answers_keep_the_order_of_the_items() -> None:
    items = [
        {"type": "function_call", "call_id": "a", "name": "now", "arguments": "{}"},
        {
            "type": "tool_search_call",
            "call_id": "b",
            "execution": "client",
            "arguments": '{"query": "invoices"}',
        },
        {"type": "tool_search_call", "call_id": "c", "execution": "server", "arguments": {}},
    ]
    answers = run(_toolset().execute(items, "openai-responses"))
    assert [a["type"] for a in answers] == ["function_call_output", "tool_search_output"]
    assert answers[1]["tools"][0]["tools"][0]["name"] == "list_invoices"


# -- Anthropic ----------------------------------------------------------------------------------


def test_anthropic_defer_loading_and_a_client_search_tool() -> None:
    from anthropic.types import ToolParam

    out = _toolset().definitions("anthropic")
    by_name = {d["name"]: d for d in out}
    for d in out:
        TypeAdapter(ToolParam).validate_python(d)
        assert set(d) <= keys_of(ToolParam)
    assert by_name["get_customer"]["defer_loading"] is True
    assert "defer_loading" not in by_name["now"]
    assert "defer_loading" not in by_name["search_tools"]
    assert by_name["search_tools"]["input_schema"]["required"] == ["query"]


@pytest.mark.parametrize(
    ("mode", "typed"),
    [
        ("bm25", "ToolSearchToolBm25_20251119Param"),
        ("regex", "ToolSearchToolRegex20251119Param"),
    ],
)
def test_anthropic_hosted_tool_search(mode: str, typed: str) -> None:
    import anthropic.types as types

    out = _toolset().definitions("anthropic", tool_search=mode)
    hosted = out[-1]
    TypeAdapter(getattr(types, typed)).validate_python(hosted)
    assert hosted["type"] == f"tool_search_tool_{mode}_20251119"
    assert "search_tools" not in {d.get("name") for d in out}


def test_anthropic_round_trip_tool_reference_then_the_found_tool() -> None:
    """``search_tools`` is answered with ``tool_reference`` blocks; the found tool is called."""
    from anthropic.types import Message, ToolResultBlockParam

    toolset = _toolset()
    message = Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [
                {
                    "type": "tool_use",
                    "id": "tu_1",
                    "name": "search_tools",
                    "input": {"query": "read a file", "limit": 2},
                }
            ],
        }
    )
    [answer] = run(toolset.execute(message, "anthropic"))
    TypeAdapter(ToolResultBlockParam).validate_python(answer)
    assert answer["tool_use_id"] == "tu_1"
    assert answer["content"][0] == {"type": "tool_reference", "tool_name": "read_file"}
    assert len(answer["content"]) <= 2

    use = {"type": "tool_use", "id": "tu_2", "name": "read_file", "input": {"path": "a.txt"}}
    [result] = run(toolset.execute([use], "anthropic"))
    TypeAdapter(ToolResultBlockParam).validate_python(result)
    assert result["content"] == "text of a.txt"


def test_a_bad_search_is_an_error_result_not_an_exception() -> None:
    use = {"type": "tool_use", "id": "tu", "name": "search_tools", "input": {"limit": 3}}
    [answer] = run(_toolset().execute([use], "anthropic"))
    assert answer["is_error"] is True
    assert "query" in answer["content"]


# -- the other formats: a search_tools meta tool ------------------------------------------------


def test_chat_completions_leaves_deferred_tools_out_and_adds_search_tools() -> None:
    from openai.types.chat import ChatCompletionToolParam

    out = _toolset().definitions("openai")
    for d in out:
        TypeAdapter(ChatCompletionToolParam).validate_python(d)
    assert [d["function"]["name"] for d in out] == ["now", "search_tools"]
    loaded = _toolset().definitions("openai", loaded=["read_file"])
    assert [d["function"]["name"] for d in loaded] == ["now", "read_file", "search_tools"]


def test_chat_completions_search_result_carries_chat_definitions() -> None:
    from openai.types.chat import ChatCompletionToolMessageParam, ChatCompletionToolParam

    toolset = _toolset()
    message = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "search_tools", "arguments": '{"query": "invoices"}'},
            }
        ],
    }
    [answer] = run(toolset.execute(message, "openai"))
    TypeAdapter(ChatCompletionToolMessageParam).validate_python(answer)
    found = json.loads(answer["content"])["tools"]
    TypeAdapter(ChatCompletionToolParam).validate_python(found[0])
    assert found[0]["function"]["name"] == "list_invoices"
    call = {
        "id": "c2",
        "type": "function",
        "function": {"name": "list_invoices", "arguments": '{"customer_id": "c7"}'},
    }
    [result] = run(toolset.execute([call], "openai"))
    assert result["content"] == "invoices of c7: none"


def test_gemini_and_bedrock_search_tools_definitions() -> None:
    from google.genai import types as genai

    from .test_definitions import validate_converse

    gemini = _toolset().definitions("gemini")
    for d in gemini:
        genai.FunctionDeclaration.model_validate(d)
    assert [d["name"] for d in gemini] == ["now", "search_tools"]
    bedrock = _toolset().definitions("bedrock")
    validate_converse({"toolConfig": {"tools": bedrock}})
    assert [d["toolSpec"]["name"] for d in bedrock] == ["now", "search_tools"]


def test_gemini_search_result_carries_function_declarations() -> None:
    from google.genai import types as genai

    parts = [{"functionCall": {"name": "search_tools", "args": {"query": "customer"}}}]
    [answer] = run(_toolset().execute(parts, "gemini"))
    response = answer["functionResponse"]["response"]["output"]
    genai.FunctionDeclaration.model_validate(response["tools"][0])
    assert response["tools"][0]["name"] == "get_customer"


def test_neutral_definitions_without_defer_are_every_tool() -> None:
    names = [d["name"] for d in _toolset().definitions("neutral", defer=False)]
    assert names == ["get_customer", "list_invoices", "now", "read_file"]


def test_a_tool_search_a_format_has_not_is_an_export_error() -> None:
    with pytest.raises(ExportError, match="tool_search='server' is not available for openai"):
        _toolset().definitions("openai", tool_search="server")


def test_a_real_tool_named_search_tools_keeps_its_name() -> None:
    @tool
    def search_tools(query: str) -> str:
        """A pack's own search."""
        return "own"

    toolset = Toolset(
        [*_toolset().entries(), ToolEntry("search_tools", "x.search_tools", "x", search_tools)]
    )
    names = [d["name"] for d in toolset.definitions("neutral")]
    assert "toolpacks_search_tools" in names
    assert toolset.call_sync("search_tools", {"query": "q"}).value == "own"
