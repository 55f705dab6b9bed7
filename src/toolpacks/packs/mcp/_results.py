"""What a remote tool's ``CallToolResult`` is worth to toolpacks: a value, or an error."""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any

from toolpacks.exceptions import ToolError

if TYPE_CHECKING:
    import mcp_types

__all__ = ["content_text", "result_value"]


def result_value(result: mcp_types.CallToolResult) -> Any:
    """The value of a ``CallToolResult``: its structured content if any, else its text.

    Raises:
        ToolError: ``isError`` is set; the message is the server's text.
    """
    text = content_text(result.content)
    if result.is_error:
        raise ToolError(text or "the tool reported an error without a message")
    if result.structured_content is not None:
        return result.structured_content
    return text


def content_text(blocks: list[Any]) -> str:
    """The text of MCP content blocks, one per line; images, audio and binaries described."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(f"[{kind}: {block.mime_type}, {_decoded_size(block.data)} bytes]")
        elif kind == "resource_link":
            label = f" ({block.name})" if getattr(block, "name", None) else ""
            parts.append(f"[resource link: {block.uri}{label}]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                parts.append(text)
            else:
                mime = getattr(resource, "mime_type", None) or "application/octet-stream"
                size = _decoded_size(getattr(resource, "blob", ""))
                parts.append(f"[resource: {resource.uri}, {mime}, {size} bytes]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    return "\n".join(parts)


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)
