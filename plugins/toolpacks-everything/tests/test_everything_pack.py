"""The everything pack in-process: its hooks, every tool, its prompts and its resources.

The tools that reach their caller run with ``CallHandlers`` standing in for an MCP client
(progress, log, elicitation, sampling); the prompts and resources through a host's toolset.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest
from toolpacks import CallHandlers, Host, Prompt, Resource, Tool, Toolset

import toolpacks_everything

CONFORMANCE_TOOLS = [
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_error_handling",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
]


class FakeRegister:
    """Records what a pack registers."""

    def __init__(self) -> None:
        self.config: dict[str, Any] = {}
        self.items: list[Any] = []

    def __call__(self, item: Any, /, **options: Any) -> None:
        self.items.append(item)


@pytest.fixture(scope="module")
def host() -> Any:
    with Host({"agents": {"e": {"packs": ["everything"]}}}) as built:
        yield built


def test_hooks_register_the_conformance_names() -> None:
    """Every tool, prompt and resource the conformance suite calls is registered."""
    tools, prompts, resources = FakeRegister(), FakeRegister(), FakeRegister()
    toolpacks_everything.register_tools(tools)
    toolpacks_everything.register_prompts(prompts)
    toolpacks_everything.register_resources(resources)
    assert all(isinstance(t, Tool) for t in tools.items)
    assert [t.name for t in tools.items] == [*CONFORMANCE_TOOLS, "update_watched_resource"]
    assert all(isinstance(p, Prompt) for p in prompts.items)
    assert [p.name for p in prompts.items] == [
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
    ]
    assert all(isinstance(r, Resource) for r in resources.items)
    assert [r.uri for r in resources.items] == [
        "test://static-text",
        "test://static-binary",
        "test://template/{id}/data",
        "test://watched-resource",
    ]


def test_content_tools_return_images_audio_and_resources(host: Host) -> None:
    """Image, audio, embedded resource and the mixed list, as MCP content blocks."""
    toolset: Toolset = host.toolset("e")
    image = toolset.call_sync("test_image_content", {})
    assert not image.is_error
    assert "image/png" in image.content
    mixed = toolset.call_sync("test_multiple_content_types", {})
    assert not mixed.is_error
    assert "Multiple content types test:" in mixed.content
    error = toolset.call_sync("test_error_handling", {})
    assert error.is_error
    assert "This tool intentionally returns an error for testing" in error.content


def test_tools_reach_their_caller(host: Host) -> None:
    """Progress 0/50/100, three info logs, sampling and each elicitation form."""
    seen: dict[str, list[Any]] = {"progress": [], "log": [], "asked": []}

    def elicitation(message: str, schema: dict[str, Any]) -> dict[str, Any]:
        seen["asked"].append(schema)
        props = schema["properties"]
        if "username" in props:
            return {"action": "accept", "content": {"username": "ada", "email": "a@b.c"}}
        return {"action": "decline"}

    toolset = host.toolset("e")
    toolset.handlers = CallHandlers(
        progress=lambda p, t, m: seen["progress"].append((p, t)),
        log=lambda level, message: seen["log"].append((level, message)),
        elicitation=elicitation,
        sampling=lambda params: "four",
    )

    async def main() -> list[Any]:
        return [
            await toolset.call("test_tool_with_progress", {}),
            await toolset.call("test_tool_with_logging", {}),
            await toolset.call("test_sampling", {"prompt": "2+2?"}),
            await toolset.call("test_elicitation", {"message": "who?"}),
            await toolset.call("test_elicitation_sep1034_defaults", {}),
            await toolset.call("test_elicitation_sep1330_enums", {}),
        ]

    results = asyncio.run(main())
    assert [r.is_error for r in results] == [False] * 6
    assert seen["progress"] == [(0, 100), (50, 100), (100, 100)]
    assert [m for _, m in seen["log"]] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert results[2].content == "LLM response: four"
    assert "action=accept" in results[3].content
    assert "action=decline" in results[4].content
    defaults = seen["asked"][1]["properties"]
    assert defaults["age"] == {"type": "integer", "default": 30}
    enums = seen["asked"][2]["properties"]
    assert enums["titledMulti"]["items"]["anyOf"][0] == {"const": "value1", "title": "First Choice"}


def test_prompts_and_resources_through_a_toolset(host: Host) -> None:
    """Prompts with arguments, embedded resource and image; static, template, watched reads."""
    toolset = host.toolset("e")
    got = asyncio.run(
        toolset.get_prompt("test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "x"})
    )
    assert "testValue1" in got["messages"][0]["content"]["text"]
    embedded = asyncio.run(
        toolset.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://r"})
    )
    assert embedded["messages"][0]["content"]["resource"]["uri"] == "test://r"
    image = asyncio.run(toolset.get_prompt("test_prompt_with_image"))
    assert image["messages"][0]["content"]["type"] == "image"
    binary = asyncio.run(toolset.read_resource("test://static-binary"))["contents"][0]
    assert base64.b64decode(binary["blob"]).startswith(b"\x89PNG")
    filled = asyncio.run(toolset.read_resource("test://template/123/data"))["contents"][0]
    assert '"id":"123"' in filled["text"]
    heard: list[str] = []
    watched = next(r for r in toolset.resources() if r.uri == "test://watched-resource")
    watched.listeners.add(heard.append)
    try:
        assert not toolset.call_sync("update_watched_resource", {"content": "new"}).is_error
        read = asyncio.run(toolset.read_resource("test://watched-resource"))
        assert read["contents"][0]["text"] == "new"
        assert heard == ["test://watched-resource"]
    finally:
        watched.listeners.discard(heard.append)
        toolset.call_sync("update_watched_resource", {"content": "Watched resource content"})
