"""Results rendered for each provider, and tool calls parsed from each provider's payloads."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import Any, get_type_hints

import pytest
from pydantic import TypeAdapter

from toolpacks import ToolContext, ToolError, ToolResult, tool
from toolpacks.exceptions import ExportError
from toolpacks.export import (
    FORMATS,
    ToolCall,
    ToolCallParseError,
    parse_tool_calls,
    render_result,
)


@dataclass(frozen=True)
class FakeResult:
    value: Any
    is_error: bool
    content: str
    structured: dict[str, Any] | None
    call_id: str | None
    tool_name: str


OK = FakeResult("sunny", False, "sunny", None, "call_1", "weather")
STRUCTURED = FakeResult({"t": 21}, False, '{"t":21}', {"t": 21}, "call_2", "weather")
FAILED = FakeResult(None, True, "City not found.", None, "call_3", "weather")


def keys_of(typed_dict: type) -> set[str]:
    return set(get_type_hints(typed_dict))


def converse(message: dict[str, Any]) -> None:
    """Validate a message against botocore's Converse request model (offline)."""
    from botocore import session as botocore_session
    from botocore.validate import ParamValidator  # type: ignore[import-untyped]

    model = botocore_session.get_session().get_service_model("bedrock-runtime")
    shape = model.operation_model("Converse").input_shape
    report = ParamValidator().validate({"modelId": "m", "messages": [message]}, shape)
    assert not report.has_errors(), report.generate_report()


# -- rendering -----------------------------------------------------------------------------


async def real_results() -> list[ToolResult]:
    """A structured success, a text success and a failure, from a real ``@tool``."""

    @tool
    def weather(city: str, structured: bool = False) -> Any:
        """The weather in a city."""
        if city == "Atlantis":
            raise ToolError("City not found.")
        return {"t": 21} if structured else "sunny"

    calls = [
        ({"city": "Paris", "structured": True}, "call_2"),
        ({"city": "Paris"}, "call_1"),
        ({"city": "Atlantis"}, "call_3"),
    ]
    return [await weather.invoke(args, ToolContext(call_id=cid)) for args, cid in calls]


def test_fake_results_render_like_real_results() -> None:
    """The double stands in for ``ToolResult``: with the same values, every format agrees."""
    real = asyncio.run(real_results())
    assert [(r.value, r.is_error, r.content, r.structured) for r in real] == [
        (STRUCTURED.value, False, STRUCTURED.content, {"t": 21}),
        (OK.value, False, OK.content, None),
        (None, True, "Tool 'weather' failed: City not found.", None),
    ]
    for result in real:
        fake = FakeResult(
            result.value,
            result.is_error,
            result.content,
            result.structured,
            result.call_id,
            result.tool_name,
        )
        for fmt in FORMATS:
            assert render_result(fake, fmt) == render_result(result, fmt), (fmt, fake)


@pytest.mark.parametrize("result", [OK, FAILED])
def test_openai_chat_result_is_a_tool_message(result: FakeResult) -> None:
    """Chat Completions: a ``tool`` message with the call id and the text."""
    from openai.types.chat import ChatCompletionToolMessageParam

    d = render_result(result, "openai")
    TypeAdapter(ChatCompletionToolMessageParam).validate_python(d)
    assert d == {"role": "tool", "tool_call_id": result.call_id, "content": result.content}


def test_openai_responses_result_is_a_function_call_output() -> None:
    """Responses: a ``function_call_output`` item with ``call_id`` and ``output``."""
    from openai.types.responses.response_input_param import FunctionCallOutput

    d = render_result(STRUCTURED, "openai-responses")
    TypeAdapter(FunctionCallOutput).validate_python(d)
    assert set(d) <= keys_of(FunctionCallOutput)
    assert d == {"type": "function_call_output", "call_id": "call_2", "output": '{"t":21}'}


def test_anthropic_result_flags_errors_only() -> None:
    """Anthropic: a ``tool_result`` block; ``is_error`` appears only when true."""
    from anthropic.types import ToolResultBlockParam

    ok = render_result(OK, "anthropic")
    bad = render_result(FAILED, "anthropic")
    for d in (ok, bad):
        TypeAdapter(ToolResultBlockParam).validate_python(d)
    assert ok == {"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"}
    assert bad["is_error"] is True
    assert bad["content"] == "City not found."


def test_bedrock_result_uses_json_for_structured_values() -> None:
    """Bedrock: JSON content for a structured success, text otherwise, and a status."""
    structured = render_result(STRUCTURED, "bedrock")
    text = render_result(OK, "bedrock")
    failed = render_result(FAILED, "bedrock")
    assert structured["toolResult"]["content"] == [{"json": {"t": 21}}]
    assert text["toolResult"] == {
        "toolUseId": "call_1",
        "content": [{"text": "sunny"}],
        "status": "success",
    }
    assert failed["toolResult"]["status"] == "error"
    assert failed["toolResult"]["content"] == [{"text": "City not found."}]
    converse({"role": "user", "content": [structured, text, failed]})


def test_gemini_result_is_a_function_response() -> None:
    """Gemini: ``{"output": ...}`` on success, ``{"error": text}`` on failure, with the id."""
    assert render_result(STRUCTURED, "gemini") == {
        "functionResponse": {"name": "weather", "id": "call_2", "response": {"output": {"t": 21}}}
    }
    assert render_result(OK, "gemini")["functionResponse"]["response"] == {"output": "sunny"}
    failed = render_result(FAILED, "gemini")
    assert failed["functionResponse"]["response"] == {"error": "City not found."}
    no_id = render_result(dataclasses.replace(OK, call_id=""), "gemini")
    assert "id" not in no_id["functionResponse"]
    from google.genai import types as genai
    for d in (failed, no_id):
        genai.Part.model_validate(d)


def test_mcp_result_is_a_call_tool_result() -> None:
    """MCP: text content, ``structuredContent`` for structured successes, ``isError``."""
    import mcp_types

    structured = render_result(STRUCTURED, "mcp")
    assert structured == {
        "content": [{"type": "text", "text": '{"t":21}'}],
        "structuredContent": {"t": 21},
        "isError": False,
    }
    failed = render_result(FAILED, "mcp")
    assert failed == {"content": [{"type": "text", "text": "City not found."}], "isError": True}
    assert mcp_types.CallToolResult.model_validate(structured).structured_content == {"t": 21}
    assert mcp_types.CallToolResult.model_validate(failed).is_error is True


def test_neutral_result() -> None:
    """``neutral``: id, name, error flag, text, structured value."""
    assert render_result(STRUCTURED, "neutral") == {
        "call_id": "call_2",
        "name": "weather",
        "is_error": False,
        "content": '{"t":21}',
        "structured": {"t": 21},
    }


def test_real_tool_result_renders() -> None:
    """The core's ``ToolResult`` renders in every format."""
    result = ToolResult({"t": 21}, tool_name="weather", call_id="call_9")
    assert render_result(result, "mcp")["structuredContent"] == {"t": 21}
    assert render_result(result, "anthropic")["tool_use_id"] == "call_9"
    for fmt in FORMATS:
        assert render_result(result, fmt)


def test_render_unknown_format() -> None:
    """An unknown format is an ``ExportError``."""
    with pytest.raises(ExportError, match="valid formats"):
        render_result(OK, "xml")  # type: ignore[arg-type]


# -- parsing: OpenAI -----------------------------------------------------------------------

CHAT_MESSAGE = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_a",
            "type": "function",
            "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
        },
        {"id": "call_b", "type": "function", "function": {"name": "time", "arguments": "{}"}},
    ],
}
CHAT_CALLS = [
    ToolCall("call_a", "weather", '{"city": "Oslo"}'),
    ToolCall("call_b", "time", "{}"),
]


def test_openai_message_and_list_and_completion() -> None:
    """A message, its ``tool_calls`` list and a whole completion give the same calls."""
    completion = {"id": "x", "choices": [{"index": 0, "message": CHAT_MESSAGE}]}
    assert parse_tool_calls(CHAT_MESSAGE, "openai") == CHAT_CALLS
    assert parse_tool_calls(CHAT_MESSAGE["tool_calls"], "openai") == CHAT_CALLS
    assert parse_tool_calls(completion, "openai") == CHAT_CALLS


def test_openai_sdk_objects() -> None:
    """SDK objects are read through ``model_dump()``; arguments stay JSON text."""
    from openai.types.chat import ChatCompletion, ChatCompletionMessage

    message = ChatCompletionMessage.model_validate(CHAT_MESSAGE)
    assert parse_tool_calls(message, "openai") == CHAT_CALLS
    assert parse_tool_calls(message.tool_calls, "openai") == CHAT_CALLS
    completion = ChatCompletion.model_validate(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": CHAT_MESSAGE}],
        }
    )
    assert parse_tool_calls(completion, "openai") == CHAT_CALLS


def test_openai_message_without_tool_calls() -> None:
    """A plain text answer has no calls."""
    assert parse_tool_calls({"role": "assistant", "content": "Hi"}, "openai") == []
    assert (
        parse_tool_calls({"role": "assistant", "content": "Hi", "tool_calls": None}, "openai") == []
    )


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"foo": 1}, "expected a chat completion"),
        ({"tool_calls": "nope"}, "'tool_calls' to be a list"),
        ([{"type": "function", "function": {"name": "x", "arguments": "{}"}}], "string 'id'"),
        ([{"id": "1", "type": "function", "function": "x"}], "'function' of tool call 0"),
        ([{"id": "1", "function": {"arguments": "{}"}}], "string 'name'"),
        ([{"id": "1", "function": {"name": "x", "arguments": 3}}], "object or JSON text"),
        ([{"id": "1", "type": "custom", "custom": {}}], "only 'function' tool calls"),
        ({"choices": [{"message": CHAT_MESSAGE}] * 2}, "2 choices"),
        (42, "to be a list"),
    ],
)
def test_openai_malformed_payloads(payload: Any, expected: str) -> None:
    """Malformed payloads raise ``ToolCallParseError`` saying what was expected."""
    with pytest.raises(ToolCallParseError, match=expected) as info:
        parse_tool_calls(payload, "openai")
    assert isinstance(info.value, ExportError)
    assert isinstance(info.value, ValueError)


RESPONSE = {
    "id": "resp_1",
    "output": [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_a",
            "name": "weather",
            "arguments": '{"city": "Oslo"}',
        },
        {"type": "message", "id": "m", "role": "assistant", "content": []},
        {"type": "function_call", "call_id": "call_b", "name": "time", "arguments": "{}"},
    ],
}


def test_openai_responses_output_items() -> None:
    """``function_call`` items (by ``call_id``) from a response, its output or one item."""
    assert parse_tool_calls(RESPONSE, "openai-responses") == CHAT_CALLS
    assert parse_tool_calls(RESPONSE["output"], "openai-responses") == CHAT_CALLS
    assert parse_tool_calls(RESPONSE["output"][3], "openai-responses") == CHAT_CALLS[1:]


def test_openai_responses_sdk_objects() -> None:
    """``ResponseFunctionToolCall`` objects are accepted."""
    from openai.types.responses import ResponseFunctionToolCall

    items = [ResponseFunctionToolCall.model_validate(RESPONSE["output"][1])]
    assert parse_tool_calls(items, "openai-responses") == CHAT_CALLS[:1]


def test_openai_responses_malformed() -> None:
    """A function_call without ``call_id``, or an unrelated object, is refused."""
    with pytest.raises(ToolCallParseError, match="string 'call_id'"):
        parse_tool_calls(
            [{"type": "function_call", "name": "x", "arguments": "{}"}], "openai-responses"
        )
    with pytest.raises(ToolCallParseError, match="'output'"):
        parse_tool_calls({"type": "message"}, "openai-responses")


# -- parsing: Anthropic, Bedrock, Gemini, MCP, neutral -------------------------------------

ANTHROPIC_MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude",
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
    "content": [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}},
    ],
}


def test_anthropic_message_blocks_and_sdk_objects() -> None:
    """``tool_use`` blocks from a message dict, an SDK ``Message`` or the content list."""
    from anthropic.types import Message

    expected = [ToolCall("toolu_1", "weather", {"city": "Oslo"})]
    assert parse_tool_calls(ANTHROPIC_MESSAGE, "anthropic") == expected
    assert parse_tool_calls(ANTHROPIC_MESSAGE["content"], "anthropic") == expected
    message = Message.model_validate(ANTHROPIC_MESSAGE)
    assert parse_tool_calls(message, "anthropic") == expected
    assert parse_tool_calls(message.content, "anthropic") == expected
    assert parse_tool_calls({"role": "assistant", "content": "hi"}, "anthropic") == []


def test_anthropic_malformed() -> None:
    """A tool_use without input, or an id that is not a string, is refused."""
    with pytest.raises(ToolCallParseError, match="'input'"):
        parse_tool_calls([{"type": "tool_use", "id": "t", "name": "x"}], "anthropic")
    with pytest.raises(ToolCallParseError, match="string 'id'"):
        parse_tool_calls([{"type": "tool_use", "id": 5, "name": "x", "input": {}}], "anthropic")
    with pytest.raises(ToolCallParseError, match="content block 0 to be an object"):
        parse_tool_calls(["text"], "anthropic")
    with pytest.raises(ToolCallParseError, match="expected a message with 'content'"):
        parse_tool_calls({"role": "assistant"}, "anthropic")


CONVERSE = {
    "output": {
        "message": {
            "role": "assistant",
            "content": [
                {"text": "Checking."},
                {
                    "toolUse": {
                        "toolUseId": "tooluse_1",
                        "name": "weather",
                        "input": {"city": "Oslo"},
                    }
                },
            ],
        }
    },
    "stopReason": "tool_use",
}


def test_bedrock_response_message_and_content() -> None:
    """``toolUse`` blocks from a Converse response, its message or its content list."""
    expected = [ToolCall("tooluse_1", "weather", {"city": "Oslo"})]
    message = CONVERSE["output"]["message"]  # type: ignore[index]
    assert parse_tool_calls(CONVERSE, "bedrock") == expected
    assert parse_tool_calls({"message": message}, "bedrock") == expected
    assert parse_tool_calls(message, "bedrock") == expected
    assert parse_tool_calls(message["content"], "bedrock") == expected


def test_bedrock_malformed() -> None:
    """Missing ``output.message``, ``toolUseId`` or ``input`` is refused."""
    with pytest.raises(ToolCallParseError, match=r"'output\.message'"):
        parse_tool_calls({"output": {}}, "bedrock")
    with pytest.raises(ToolCallParseError, match="string 'toolUseId'"):
        parse_tool_calls([{"toolUse": {"name": "x", "input": {}}}], "bedrock")
    with pytest.raises(ToolCallParseError, match="'input'"):
        parse_tool_calls([{"toolUse": {"toolUseId": "t", "name": "x"}}], "bedrock")
    with pytest.raises(ToolCallParseError, match="Converse response"):
        parse_tool_calls({"stopReason": "end_turn"}, "bedrock")


GEMINI_RESPONSE = {
    "candidates": [
        {
            "content": {
                "role": "model",
                "parts": [
                    {"text": "Checking."},
                    {"functionCall": {"name": "weather", "args": {"city": "Oslo"}, "id": "fc_1"}},
                    {"functionCall": {"name": "time"}},
                ],
            }
        }
    ]
}
GEMINI_CALLS = [ToolCall("fc_1", "weather", {"city": "Oslo"}), ToolCall("", "time", {})]


def test_gemini_response_content_parts_and_sdk_objects() -> None:
    """``functionCall`` parts (args default to {}, id to "") from dicts or SDK objects."""
    content = GEMINI_RESPONSE["candidates"][0]["content"]
    assert parse_tool_calls(GEMINI_RESPONSE, "gemini") == GEMINI_CALLS
    assert parse_tool_calls(content, "gemini") == GEMINI_CALLS
    assert parse_tool_calls(content["parts"], "gemini") == GEMINI_CALLS
    from google.genai import types as genai
    response = genai.GenerateContentResponse.model_validate(GEMINI_RESPONSE)
    assert parse_tool_calls(response, "gemini") == GEMINI_CALLS


def test_gemini_malformed() -> None:
    """Several candidates, or a call without a name, is refused."""
    with pytest.raises(ToolCallParseError, match="2 candidates"):
        parse_tool_calls({"candidates": GEMINI_RESPONSE["candidates"] * 2}, "gemini")
    with pytest.raises(ToolCallParseError, match="string 'name'"):
        parse_tool_calls([{"functionCall": {"args": {}}}], "gemini")


def test_mcp_tools_call_request() -> None:
    """A JSON-RPC ``tools/call`` request or its params give one call."""
    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "weather"}}
    assert parse_tool_calls(request, "mcp") == [ToolCall("7", "weather", {})]
    params = {"name": "weather", "arguments": {"city": "Oslo"}}
    assert parse_tool_calls(params, "mcp") == [ToolCall("", "weather", {"city": "Oslo"})]
    with pytest.raises(ToolCallParseError, match="string 'name'"):
        parse_tool_calls({"params": {}}, "mcp")


def test_neutral_calls() -> None:
    """Mappings and ``ToolCall`` objects pass through ``neutral``."""
    call = ToolCall("1", "weather", {"city": "Oslo"})
    assert parse_tool_calls([call, {"name": "time"}], "neutral") == [call, ToolCall("", "time", {})]
    assert parse_tool_calls({"name": "x", "arguments": "{}", "id": "2"}, "neutral") == [
        ToolCall("2", "x", "{}")
    ]


def test_tool_call_is_frozen() -> None:
    """``ToolCall`` is a value."""
    call = ToolCall("1", "x", {})
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.name = "y"  # type: ignore[misc]


def test_parse_unknown_format() -> None:
    """An unknown format is an ``ExportError`` listing the valid ones."""
    with pytest.raises(ExportError, match="valid formats"):
        parse_tool_calls([], "cohere")  # type: ignore[arg-type]


# -- end to end with a toolset -------------------------------------------------------------


def test_toolset_executes_provider_payloads() -> None:
    """A toolset runs parsed calls and renders each result for the same provider."""
    import asyncio

    from toolpacks import hookimpl, tool
    from toolpacks.testing import make_host

    @tool
    def weather(city: str) -> dict[str, Any]:
        """Weather for a city."""
        return {"city": city, "t": 21}

    class Pack:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(weather)

    toolset = make_host(Pack(), names=["demo"]).toolset()
    exposed = toolset.names()[0]
    message = {
        "content": [
            {"type": "tool_use", "id": "toolu_9", "name": exposed, "input": {"city": "Oslo"}}
        ]
    }
    [rendered] = asyncio.run(toolset.execute(message, "anthropic"))
    assert rendered["tool_use_id"] == "toolu_9"
    assert "Oslo" in rendered["content"]
    assert "is_error" not in rendered
