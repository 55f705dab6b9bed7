"""Results holding images, audio or resources, in provider formats that can carry them.

``parts(result)`` resolves a successful result whose value is content (``core._content``)
into its parts; each format renders what it can carry and a text stand-in for the rest:
Anthropic ``tool_result`` image blocks (JPEG, PNG, GIF, WebP), OpenAI Responses
``input_image`` items, Gemini ``functionResponse`` inline data parts. Chat Completions,
Bedrock and the neutral format keep the text stand-in (``ToolResult.content``). Content
that cannot be sent (``BadContent``), or text past the call's limit, falls back to
``result.content``, which says so.
"""

from __future__ import annotations

from typing import Any

from toolpacks.core._content import BadContent, Block, has_content, resolve
from toolpacks.core._result import render_value
from toolpacks.export._protocol import ExportableResult

__all__ = ["ANTHROPIC_IMAGES", "anthropic_content", "gemini_parts", "parts", "responses_output"]

ANTHROPIC_IMAGES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
"""The image types Anthropic accepts in a ``tool_result``."""


def parts(result: ExportableResult) -> list[Block] | None:
    """The parts of a successful content result, or None (plain, failed, or unsendable)."""
    if result.is_error or not has_content(result.value):
        return None
    try:
        blocks = resolve(result.value, render_value)
    except BadContent:
        return None
    limit = getattr(result, "_max_chars", 0)
    if limit and sum(len(b.text or "") for b in blocks if b.kind == "text") > limit:
        return None
    return blocks


def anthropic_content(blocks: list[Block]) -> list[dict[str, Any]]:
    """``tool_result`` content: text blocks, and image blocks for the types Anthropic takes."""
    out: list[dict[str, Any]] = []
    for b in blocks:
        if b.kind == "image" and b.mime_type in ANTHROPIC_IMAGES:
            source = {"type": "base64", "media_type": b.mime_type, "data": b.b64}
            out.append({"type": "image", "source": source})
        else:
            out.append({"type": "text", "text": b.stand_in})
    return out


def responses_output(blocks: list[Block]) -> list[dict[str, Any]]:
    """A Responses ``function_call_output`` output list: input_text and input_image items."""
    out: list[dict[str, Any]] = []
    for b in blocks:
        if b.kind == "image":
            url = f"data:{b.mime_type};base64,{b.b64}"
            out.append({"type": "input_image", "image_url": url, "detail": "auto"})
        else:
            out.append({"type": "input_text", "text": b.stand_in})
    return out


def gemini_parts(blocks: list[Block]) -> tuple[str, list[dict[str, Any]]]:
    """The text of a Gemini ``functionResponse`` and its inline-data parts (images, audio)."""
    texts: list[str] = []
    inline: list[dict[str, Any]] = []
    for b in blocks:
        if b.kind in ("image", "audio") or (b.kind == "resource" and b.data is not None):
            inline.append(
                {
                    "inlineData": {
                        "mimeType": b.mime_type or "application/octet-stream",
                        "data": b.b64,
                    }
                }
            )
        texts.append(b.stand_in)
    return "\n".join(texts), inline
