"""A tool returning an image, rendered in each provider format and checked with its SDK's types.

Anthropic and OpenAI Responses carry the image; Gemini carries it as inline data; Chat
Completions, Bedrock and neutral carry the text stand-in. Each rendering is validated with
the provider's official SDK types (anthropic, openai, google-genai, mcp).
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest
from pydantic import TypeAdapter

from toolpacks import Image, ResourceLink, Toolset, render_result, tool

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@tool
def shot() -> list[str | Image | ResourceLink]:
    """A screenshot with a caption."""
    return ["the page:", Image(PNG, mime_type="image/png"), ResourceLink("https://x.test/p", "p")]


@tool
def tiff() -> Image:
    """An image type Anthropic does not take."""
    return Image(b"II*\x00", mime_type="image/tiff")


def result_of(t: Any) -> Any:
    result = asyncio.run(Toolset([t]).call(t.name, {}, call_id="call_1"))
    assert result.ok, result.content
    return result


def test_anthropic_gets_an_image_block() -> None:
    """``tool_result`` content: text, an image block (base64), the link's stand-in."""
    from anthropic.types import ToolResultBlockParam

    rendered = render_result(result_of(shot), "anthropic")
    TypeAdapter(ToolResultBlockParam).validate_python(rendered)
    content = rendered["content"]
    assert [b["type"] for b in content] == ["text", "image", "text"]
    assert content[1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode(),
    }
    assert content[2]["text"] == "[resource link: p <https://x.test/p>]"


def test_anthropic_gets_a_stand_in_for_a_type_it_does_not_take() -> None:
    """A TIFF is not an Anthropic image type: its stand-in text instead."""
    from anthropic.types import ToolResultBlockParam

    rendered = render_result(result_of(tiff), "anthropic")
    TypeAdapter(ToolResultBlockParam).validate_python(rendered)
    assert rendered["content"] == [{"type": "text", "text": "[image/tiff, 4 bytes]"}]


def test_openai_responses_gets_an_input_image() -> None:
    """``function_call_output`` output: input_text and a data-URL input_image."""
    from openai.types.responses.response_input_item_param import FunctionCallOutput

    rendered = render_result(result_of(shot), "openai-responses")
    TypeAdapter(FunctionCallOutput).validate_python(rendered)
    output = rendered["output"]
    assert [item["type"] for item in output] == ["input_text", "input_image", "input_text"]
    assert output[1]["image_url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()


def test_openai_chat_gets_the_stand_in() -> None:
    """Chat Completions tool messages hold text only: the stand-in."""
    from openai.types.chat import ChatCompletionToolMessageParam

    rendered = render_result(result_of(shot), "openai")
    TypeAdapter(ChatCompletionToolMessageParam).validate_python(rendered)
    assert (
        rendered["content"]
        == f"the page:\n[image/png, {len(PNG)} bytes]\n[resource link: p <https://x.test/p>]"
    )


def test_gemini_gets_inline_data() -> None:
    """A ``functionResponse`` with the text and the image as an inline-data part."""
    from google.genai import types

    rendered = render_result(result_of(shot), "gemini")
    part = types.Part.model_validate(rendered)
    assert part.function_response is not None
    assert part.function_response.parts is not None
    (inline,) = part.function_response.parts
    assert inline.inline_data is not None
    assert inline.inline_data.mime_type == "image/png"
    assert inline.inline_data.data == PNG
    assert rendered["functionResponse"]["response"]["output"].startswith("the page:")


@pytest.mark.parametrize("fmt", ["bedrock", "neutral"])
def test_other_formats_get_the_stand_in(fmt: str) -> None:
    """Bedrock and neutral carry the text stand-in, never bytes or a broken message."""
    rendered = render_result(result_of(shot), fmt)
    assert "[image/png, " in str(rendered)
    assert base64.b64encode(PNG).decode() not in str(rendered)


@pytest.mark.parametrize("served", [True, False])
def test_mcp_result_validates(served: bool) -> None:
    """The MCP rendering (a server's, and ``render_result``'s): image and link blocks."""
    import mcp_types

    from toolpacks.mcp._direct import content_result

    result = result_of(shot)
    rendered = content_result("shot", result) if served else render_result(result, "mcp")
    parsed = mcp_types.CallToolResult.model_validate(rendered)
    assert [b.type for b in parsed.content] == ["text", "image", "resource_link"]


# -- framework adapters: an image result never breaks them -----------------------------------


def test_pydantic_ai_gets_the_stand_in() -> None:
    """pydantic-ai's toolset returns the text stand-in, not the Image object."""
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from toolpacks.integrations.pydantic_ai import as_toolset

    adapter = as_toolset(Toolset([shot]))
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage(), tool_call_id="pc1")

    async def main() -> Any:
        listed = (await adapter.get_tools(ctx))["shot"]
        return await adapter.call_tool("shot", {}, ctx, listed)

    assert asyncio.run(main()).startswith("the page:\n[image/png, ")


def test_openai_agents_gets_the_stand_in() -> None:
    """openai-agents' FunctionTool answers with the text stand-in."""
    from agents.tool_context import ToolContext as AgentsToolContext

    from toolpacks.integrations.openai_agents import as_tools

    (function_tool,) = as_tools(Toolset([shot]))
    ctx = AgentsToolContext(None, tool_name="shot", tool_call_id="c1", tool_arguments="{}")
    output = asyncio.run(function_tool.on_invoke_tool(ctx, "{}"))
    assert output.startswith("the page:\n[image/png, ")


def test_langchain_gets_the_stand_in() -> None:
    """A langchain ToolMessage holds the stand-in as content and as artifact."""
    from toolpacks.integrations.langchain import as_tools

    (lc_tool,) = as_tools(Toolset([shot]))
    message = asyncio.run(
        lc_tool.ainvoke({"name": "shot", "args": {}, "id": "c1", "type": "tool_call"})
    )
    assert message.content.startswith("the page:\n[image/png, ")
    assert message.artifact == message.content
