"""The pack's tools: one per MCP feature, named as the conformance suite calls them.

Each returns or does exactly what the suite's server scenarios check, so they double as the
shortest example of every feature a pack author may need: rich content (``Image``,
``Audio``, ``EmbeddedResource``), log messages and progress through ``ToolContext``, asking
the user (``elicit``) and the caller's model (``sample``), an error result, and a tool
declared by its JSON Schema alone.
"""

from __future__ import annotations

import asyncio
from typing import Any

from toolpacks import Audio, EmbeddedResource, Image, ToolContext, tool
from toolpacks.exceptions import ToolError

from toolpacks_everything._media import PNG, WAV
from toolpacks_everything.resources import watched

__all__ = [
    "TOOLS",
    "json_schema_2020_12_tool",
    "test_audio_content",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_embedded_resource",
    "test_error_handling",
    "test_image_content",
    "test_multiple_content_types",
    "test_sampling",
    "test_simple_text",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "update_watched_resource",
]

STEP_SECONDS = 0.05
"""The pause between a tool's log messages or progress reports."""


@tool
def test_simple_text() -> str:
    """Return a simple text response."""
    return "This is a simple text response for testing."


@tool
def test_image_content() -> Image:
    """Return a 1x1 red PNG image."""
    return Image(PNG, mime_type="image/png")


@tool
def test_audio_content() -> Audio:
    """Return a short WAV clip."""
    return Audio(WAV, mime_type="audio/wav")


@tool
def test_embedded_resource() -> EmbeddedResource:
    """Return a text resource embedded in the result."""
    return EmbeddedResource(
        "test://embedded-resource",
        text="This is an embedded resource content.",
        mime_type="text/plain",
    )


@tool
def test_multiple_content_types() -> list[Any]:
    """Return text, an image and an embedded JSON resource in one result."""
    return [
        "Multiple content types test:",
        Image(PNG, mime_type="image/png"),
        EmbeddedResource(
            "test://mixed-content-resource",
            text='{"test":"data","value":123}',
            mime_type="application/json",
        ),
    ]


@tool
async def test_tool_with_logging(ctx: ToolContext) -> str:
    """Send three info log messages while running."""
    await ctx.log("info", "Tool execution started")
    await asyncio.sleep(STEP_SECONDS)
    await ctx.log("info", "Tool processing data")
    await asyncio.sleep(STEP_SECONDS)
    await ctx.log("info", "Tool execution completed")
    return "Logging test completed"


@tool
async def test_tool_with_progress(ctx: ToolContext) -> str:
    """Report progress 0, 50 and 100 of 100 while running."""
    for done in (0, 50, 100):
        await ctx.report_progress(done, 100)
        if done < 100:
            await asyncio.sleep(STEP_SECONDS)
    return "Progress test completed"


@tool
def test_error_handling() -> str:
    """Always fail (the result is an error result)."""
    raise ToolError("This tool intentionally returns an error for testing")


@tool
async def test_sampling(prompt: str, ctx: ToolContext) -> str:
    """Ask the client's model to answer a prompt.

    Args:
        prompt: The prompt to send to the LLM.
        ctx: The call's context (injected; not an argument of the model's).
    """
    answer = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {answer.text}"


@tool
async def test_elicitation(message: str, ctx: ToolContext) -> str:
    """Ask the user for a username and an email address.

    Args:
        message: The message to show the user.
        ctx: The call's context (injected; not an argument of the model's).
    """
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    answer = await ctx.elicit(message, schema)
    return f"User response: action={answer.action}, content={answer.content}"


@tool
async def test_elicitation_sep1034_defaults(ctx: ToolContext) -> str:
    """Ask the user with a form whose every field has a default (SEP-1034)."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {
                "type": "string",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "default": True},
        },
    }
    answer = await ctx.elicit("Please review and update the form fields with defaults", schema)
    return f"Elicitation completed: action={answer.action}, content={answer.content}"


@tool
async def test_elicitation_sep1330_enums(ctx: ToolContext) -> str:
    """Ask the user with every enum shape a form may use (SEP-1330)."""
    options = ["option1", "option2", "option3"]
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": options},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": options}},
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
    }
    answer = await ctx.elicit("Please select options from the enum fields", schema)
    return f"Elicitation completed: action={answer.action}, content={answer.content}"


_ADDRESS_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


@tool(input_schema=_ADDRESS_SCHEMA, description="Tool with JSON Schema 2020-12 features")
def json_schema_2020_12_tool(**arguments: Any) -> str:
    """Echo a name and address given by a JSON Schema 2020-12 input schema."""
    return f"Received: {arguments}"


@tool
def update_watched_resource(content: str) -> str:
    """Change test://watched-resource; its subscribers are told it was updated.

    Args:
        content: The resource's new text.
    """
    watched.set(content)
    return "test://watched-resource updated"


TOOLS = (
    test_simple_text,
    test_image_content,
    test_audio_content,
    test_embedded_resource,
    test_multiple_content_types,
    test_tool_with_logging,
    test_tool_with_progress,
    test_error_handling,
    test_sampling,
    test_elicitation,
    test_elicitation_sep1034_defaults,
    test_elicitation_sep1330_enums,
    json_schema_2020_12_tool,
    update_watched_resource,
)
"""The pack's tools, in registration order."""
