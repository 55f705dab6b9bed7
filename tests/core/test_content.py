"""Result content beyond text: images, audio and resources, checked when the call ends."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest

from toolpacks import Audio, EmbeddedResource, Image, ResourceLink, Toolset, tool
from toolpacks.core._content import MAX_BINARY_BYTES, mcp_blocks, resolve
from toolpacks.core._result import render_value

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def test_an_image_alone_keeps_its_value_and_reads_as_a_stand_in() -> None:
    """A tool returning an Image succeeds; ``value`` is the Image, ``content`` a stand-in."""

    @tool
    def shot() -> Image:
        """A screenshot."""
        return Image(PNG, mime_type="image/png")

    result = asyncio.run(shot.invoke({}))
    assert result.ok
    assert isinstance(result.value, Image)
    assert result.content == f"[image/png, {len(PNG)} bytes]"
    assert result.structured is None


def test_a_mixed_list_renders_each_part() -> None:
    """Text, JSON values, images, audio and resources in one list become one block each."""
    value = [
        "look:",
        {"n": 1},
        Image(PNG),
        Audio(b"RIFF", mime_type="audio/wav"),
        EmbeddedResource("file:///a.txt", text="hello", mime_type="text/plain"),
        EmbeddedResource("file:///b.bin", blob=b"\x00\x01"),
        ResourceLink("file:///c.txt", "c", description="the c file", size=3),
    ]
    blocks = mcp_blocks(resolve(value, render_value))
    assert [b["type"] for b in blocks] == [
        "text",
        "text",
        "image",
        "audio",
        "resource",
        "resource",
        "resource_link",
    ]
    assert blocks[1]["text"] == '{"n":1}'
    assert base64.b64decode(blocks[2]["data"]) == PNG
    assert blocks[2]["mimeType"] == "image/png"
    assert blocks[4]["resource"] == {
        "uri": "file:///a.txt",
        "mimeType": "text/plain",
        "text": "hello",
    }
    assert base64.b64decode(blocks[5]["resource"]["blob"]) == b"\x00\x01"
    assert blocks[6] == {
        "type": "resource_link",
        "uri": "file:///c.txt",
        "name": "c",
        "description": "the c file",
        "size": 3,
    }
    import mcp_types

    mcp_types.CallToolResult.model_validate({"content": blocks, "isError": False})


def test_an_image_from_a_path_is_read_when_the_call_ends(tmp_path: Path) -> None:
    """``Image(path=...)`` reads the file, guessing the MIME type from the suffix."""
    pic = tmp_path / "pic.jpg"
    pic.write_bytes(b"\xff\xd8jpeg")
    (block,) = mcp_blocks(resolve(Image(path=pic), render_value))
    assert block["mimeType"] == "image/jpeg"
    assert base64.b64decode(block["data"]) == b"\xff\xd8jpeg"


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (Image(PNG, mime_type="text/plain"), "needs image/*"),
        (Audio(b"x", mime_type="image/png"), "needs audio/*"),
        (Image(PNG, mime_type="not a mime"), "is not a MIME type"),
        (Image(path="/nonexistent/pic.png"), "cannot be read"),
        (Image(), "neither data nor path"),
        (Image(b"x" * (MAX_BINARY_BYTES + 1)), "more than the limit"),
        (EmbeddedResource("file:///x"), "neither text and blob"),
        (ResourceLink("no-scheme", "x"), "is not a URI"),
    ],
)
def test_bad_content_is_an_error_result(value: object, words: str) -> None:
    """A wrong MIME family, unreadable path, missing data or a huge image: an error result."""

    @tool
    def bad() -> object:
        """Returns bad content."""
        return value

    result = asyncio.run(bad.invoke({}))
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "output_invalid"
    assert words in result.content
    assert "Tool 'bad' returned" in result.content


def test_bad_content_in_a_list_never_breaks_the_text() -> None:
    """A list holding bad content reads as a note naming the problem, not a crash."""

    @tool
    def bad() -> list[object]:
        """Returns a list with bad content."""
        return ["a", Image(PNG, mime_type="audio/wav")]

    result = asyncio.run(Toolset([bad]).call("bad", {}))
    assert "needs image/*" in result.content
