"""Result content beyond text: images, audio, embedded resources and resource links.

A tool may return one of these alone, or a list mixing them with text and JSON values. Over
MCP each becomes a content block (``image``/``audio`` in base64, ``resource``,
``resource_link``); provider formats carry images where they can and a text stand-in such as
``[image/png, 12 KiB]`` elsewhere; ``ToolResult.content`` is that stand-in text.

Content is checked when the call ends (``resolve``): a MIME type of the wrong family (an
``Image`` that is not ``image/*``), a path that cannot be read, or binary data over
``MAX_BINARY_BYTES`` makes the call an error result, never a broken message.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import re
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "CONTENT_TYPES",
    "MAX_BINARY_BYTES",
    "Audio",
    "BadContent",
    "Block",
    "EmbeddedResource",
    "Image",
    "ResourceLink",
    "has_content",
    "mcp_blocks",
    "resolve",
    "stand_in",
]

MAX_BINARY_BYTES = 8 * 1024 * 1024
"""The most binary data (images, audio, blobs; before base64) one result may carry."""

_MIME = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$"
)


class BadContent(ValueError):
    """Content a tool returned in a shape that cannot be sent (internal)."""


@dataclass(frozen=True, slots=True)
class Image:
    """An image a tool returns: bytes, or a file to read when the call ends.

    ``mime_type`` must be ``image/*``; without one it is guessed from the path's suffix
    (``image/png`` when there is none).
    """

    data: bytes | None = None
    """The image's bytes (or give ``path``)."""
    path: str | os.PathLike[str] | None = field(default=None, kw_only=True)
    """A file to read the image from, when ``data`` is not given."""
    mime_type: str | None = field(default=None, kw_only=True)
    """The image's MIME type, such as ``image/png``."""


@dataclass(frozen=True, slots=True)
class Audio:
    """Audio a tool returns: bytes, or a file to read when the call ends.

    ``mime_type`` must be ``audio/*``; without one it is guessed from the path's suffix
    (``audio/wav`` when there is none).
    """

    data: bytes | None = None
    """The audio's bytes (or give ``path``)."""
    path: str | os.PathLike[str] | None = field(default=None, kw_only=True)
    """A file to read the audio from, when ``data`` is not given."""
    mime_type: str | None = field(default=None, kw_only=True)
    """The audio's MIME type, such as ``audio/wav``."""


@dataclass(frozen=True, slots=True)
class EmbeddedResource:
    """A resource whose contents travel in the result: ``text``, or ``blob`` bytes."""

    uri: str
    """The resource's URI."""
    text: str | None = field(default=None, kw_only=True)
    """Its text (or give ``blob``)."""
    blob: bytes | None = field(default=None, kw_only=True)
    """Its binary contents (or give ``text``)."""
    mime_type: str | None = field(default=None, kw_only=True)
    """Its MIME type, if known."""


@dataclass(frozen=True, slots=True)
class ResourceLink:
    """A link to a resource the client may read (its contents are not in the result)."""

    uri: str
    """The resource's URI."""
    name: str
    """Its name, as a resource listing would show it."""
    description: str | None = field(default=None, kw_only=True)
    """What it holds."""
    mime_type: str | None = field(default=None, kw_only=True)
    """Its MIME type, if known."""
    size: int | None = field(default=None, kw_only=True)
    """Its size in bytes, if known."""


CONTENT_TYPES = frozenset({Image, Audio, EmbeddedResource, ResourceLink})
"""The content classes (an exact-type test: ``type(v) in CONTENT_TYPES``)."""


@dataclass(frozen=True, slots=True)
class Block:
    """One resolved part of a result: text, or checked binary content."""

    kind: Literal["text", "image", "audio", "resource", "resource_link"]
    """What the part is (the MCP content block type)."""
    text: str | None = None
    """The text of a text part or a text resource."""
    data: bytes | None = None
    """The bytes of an image, audio or blob resource."""
    mime_type: str | None = None
    """The MIME type of binary content or a resource."""
    item: Any = None
    """The content object the part came from (None for text)."""

    @property
    def b64(self) -> str:
        """The bytes in base64 (empty for text)."""
        return base64.b64encode(self.data or b"").decode("ascii")

    @property
    def stand_in(self) -> str:
        """The text that stands for this part where the format cannot carry it."""
        if self.kind == "text":
            return self.text or ""
        if self.kind == "resource_link":
            link: ResourceLink = self.item
            return f"[resource link: {link.name} <{link.uri}>]"
        if self.kind == "resource":
            res: EmbeddedResource = self.item
            if self.text is not None:
                return f"[resource {res.uri}]\n{self.text}"
            return f"[resource {res.uri}, {self.mime_type or 'binary'}, {_size(self.data)}]"
        return f"[{self.mime_type}, {_size(self.data)}]"


def _size(data: bytes | None) -> str:
    n = len(data or b"")
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KiB"
    return f"{n / (1024 * 1024):.1f} MiB"


def has_content(value: Any) -> bool:
    """Whether ``value`` is a content object, or a list holding at least one."""
    kind = type(value)
    if kind in CONTENT_TYPES:
        return True
    return kind is list and not CONTENT_TYPES.isdisjoint(map(type, value))


def resolve(value: Any, render: Any) -> list[Block]:
    """The checked parts of a content value (one content object, or a list mixing them).

    Args:
        value: What the tool returned (``has_content(value)`` is true).
        render: Renders a plain value (text, JSON) as text (``render_value``).

    Raises:
        BadContent: A part has a MIME type of the wrong family, an unreadable path, no
            data, or the binary data is over ``MAX_BINARY_BYTES``.
    """
    items = value if type(value) is list else [value]
    blocks = [_block(item, render) for item in items]
    total = sum(len(b.data) for b in blocks if b.data is not None)
    if total > MAX_BINARY_BYTES:
        raise BadContent(
            f"returned {total} bytes of binary content, more than the limit of "
            f"{MAX_BINARY_BYTES} bytes; return a smaller image or a ResourceLink instead"
        )
    return blocks


def _block(item: Any, render: Any) -> Block:
    kind = type(item)
    if kind is Image or kind is Audio:
        family = "image" if kind is Image else "audio"
        data = _data(item, family)
        mime = item.mime_type or _guess(item.path, family)
        _check_mime(mime, family, kind.__name__)
        return Block(family, data=data, mime_type=mime, item=item)  # type: ignore[arg-type]
    if kind is EmbeddedResource:
        _check_uri(item.uri, "EmbeddedResource")
        if (item.text is None) == (item.blob is None):
            raise BadContent(
                f"returned an EmbeddedResource for {item.uri!r} with "
                f"{'both' if item.text is not None else 'neither'} text and blob; give one"
            )
        if item.mime_type is not None:
            _check_mime(item.mime_type, None, "EmbeddedResource")
        if item.blob is not None and not isinstance(item.blob, bytes | bytearray):
            raise BadContent(
                f"returned an EmbeddedResource for {item.uri!r} whose blob is not bytes"
            )
        if item.text is not None and not isinstance(item.text, str):
            raise BadContent(f"returned an EmbeddedResource for {item.uri!r} whose text is not str")
        blob = bytes(item.blob) if item.blob is not None else None
        return Block("resource", text=item.text, data=blob, mime_type=item.mime_type, item=item)
    if kind is ResourceLink:
        _check_uri(item.uri, "ResourceLink")
        if not isinstance(item.name, str) or not item.name:
            raise BadContent(f"returned a ResourceLink for {item.uri!r} without a name")
        if item.mime_type is not None:
            _check_mime(item.mime_type, None, "ResourceLink")
        if item.size is not None and (type(item.size) is not int or item.size < 0):
            raise BadContent(f"returned a ResourceLink for {item.uri!r} whose size is not a count")
        return Block("resource_link", mime_type=item.mime_type, item=item)
    return Block("text", text=render(item))


def _data(item: Image | Audio, family: str) -> bytes:
    name = type(item).__name__
    if item.data is not None:
        if item.path is not None:
            raise BadContent(f"returned an {name} with both data and path; give one")
        if not isinstance(item.data, bytes | bytearray):
            raise BadContent(
                f"returned an {name} whose data is {type(item.data).__name__}, not bytes"
            )
        return bytes(item.data)
    if item.path is None:
        raise BadContent(f"returned an {name} with neither data nor path; give one")
    try:
        size = os.path.getsize(item.path)
        if size > MAX_BINARY_BYTES:
            raise BadContent(
                f"returned an {name} from {os.fspath(item.path)!r} of {size} bytes, more than "
                f"the limit of {MAX_BINARY_BYTES} bytes"
            )
        with open(item.path, "rb") as stream:
            return stream.read(MAX_BINARY_BYTES + 1)
    except OSError as exc:
        raise BadContent(
            f"returned an {name} whose path {os.fspath(item.path)!r} cannot be read "
            f"({exc.strerror or type(exc).__name__})"
        ) from None


def _guess(path: Any, family: str) -> str:
    if path is not None:
        guessed, _ = mimetypes.guess_type(os.fspath(path))
        if guessed:
            return guessed
    return "image/png" if family == "image" else "audio/wav"


def _check_mime(mime: Any, family: str | None, name: str) -> None:
    if not isinstance(mime, str) or not _MIME.match(mime):
        raise BadContent(
            f"returned an {name} with MIME type {mime!r}, which is not a MIME type "
            "(type/subtype, such as 'image/png')"
        )
    if family is not None and mime.split("/", 1)[0].lower() != family:
        raise BadContent(
            f"returned an {name} with MIME type {mime!r}; an {name} needs {family}/*, "
            f"such as '{'image/png' if family == 'image' else 'audio/wav'}'"
        )


def _check_uri(uri: Any, name: str) -> None:
    if not isinstance(uri, str) or not uri or ":" not in uri:
        raise BadContent(f"returned a {name} whose uri {uri!r} is not a URI (scheme:...)")


def stand_in(blocks: list[Block]) -> str:
    """The text of the parts: text as it is, other content as a short stand-in."""
    return "\n".join(b.stand_in for b in blocks)


def mcp_blocks(blocks: list[Block]) -> list[dict[str, Any]]:
    """The parts as MCP content blocks: text, image, audio, resource, resource_link."""
    out: list[dict[str, Any]] = []
    for b in blocks:
        if b.kind == "text":
            out.append({"type": "text", "text": b.text})
        elif b.kind in ("image", "audio"):
            out.append({"type": b.kind, "data": b.b64, "mimeType": b.mime_type})
        elif b.kind == "resource":
            res: dict[str, Any] = {"uri": b.item.uri}
            if b.mime_type is not None:
                res["mimeType"] = b.mime_type
            if b.text is not None:
                res["text"] = b.text
            else:
                res["blob"] = b.b64
            out.append({"type": "resource", "resource": res})
        else:
            link: ResourceLink = b.item
            block: dict[str, Any] = {"type": "resource_link", "uri": link.uri, "name": link.name}
            for key, val in (
                ("description", link.description),
                ("mimeType", link.mime_type),
                ("size", link.size),
            ):
                if val is not None:
                    block[key] = val
            out.append(block)
    return out
