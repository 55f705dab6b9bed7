"""What one toolset offers of prompts and resources, answered as MCP-shaped dicts.

Every road (``Toolset.get_prompt``/``read_resource``, the stdio server, the SDK's server over
HTTP) asks a ``Catalog``, so listing, argument checks, content rendering and errors are the
same everywhere. An unknown prompt or resource is ``UnknownPrompt``/``UnknownResource``, a
missing required argument ``PromptArgumentsError``, and a function that raised
``OfferingFailed`` (whose message names the prompt or resource, never the exception's text
unless errors are exposed).
"""

from __future__ import annotations

import base64
import copy
import inspect
import logging
from collections.abc import Iterable
from typing import Any

from toolpacks.core._content import BadContent, EmbeddedResource, mcp_blocks, resolve
from toolpacks.core.prompts._prompt import Prompt, PromptMessage
from toolpacks.core.prompts._resource import Listener, Resource

__all__ = [
    "Catalog",
    "OfferingFailed",
    "PromptArgumentsError",
    "UnknownPrompt",
    "UnknownResource",
]

logger = logging.getLogger("toolpacks.prompts")

MAX_COMPLETIONS = 100
"""The most values one ``completion/complete`` answer carries (the MCP limit)."""


class UnknownPrompt(LookupError):
    """A prompt name the toolset does not offer."""


class UnknownResource(LookupError):
    """A URI no resource (static or template) of the toolset answers."""


class PromptArgumentsError(ValueError):
    """A prompt called without a required argument, with an unknown one, or a non-string."""


class OfferingFailed(RuntimeError):
    """A prompt's or resource's function raised, or returned content that cannot be sent."""


async def _call(fn: Any, kwargs: dict[str, Any]) -> Any:
    value = fn(**kwargs)
    if inspect.isawaitable(value):
        value = await value
    return value


class Catalog:
    """The prompts and resources one toolset offers (exposed names and URIs unique)."""

    def __init__(
        self,
        prompts: Iterable[Prompt] = (),
        resources: Iterable[Resource] = (),
        *,
        expose_errors: bool = False,
    ) -> None:
        self.prompts: dict[str, Prompt] = {}
        """Name to prompt; the first of two with one name is kept (a warning names both)."""
        self.resources: list[Resource] = []
        """Static resources and templates, in registration order (first URI wins)."""
        self.expose_errors = expose_errors
        """Whether a failing function's exception text reaches the caller."""
        for p in prompts:
            kept = self.prompts.setdefault(p.name, p)
            if kept is not p:
                logger.warning(
                    "prompt %r of pack %r is hidden by the one of pack %r; exclude one in the "
                    "agent's prompts list", p.name, p.pack, kept.pack,
                )
        seen: dict[str, Resource] = {}
        for r in resources:
            kept_r = seen.setdefault(r.uri, r)
            if kept_r is r:
                self.resources.append(r)
            else:
                logger.warning(
                    "resource %r of pack %r is hidden by the one of pack %r; exclude one in the "
                    "agent's resources list", r.uri, r.pack, kept_r.pack,
                )

    def exposing(self, expose_errors: bool) -> Catalog:
        """This catalog, sending a failing function's exception text or not (a copy)."""
        if expose_errors is self.expose_errors:
            return self
        other = copy.copy(self)
        other.expose_errors = expose_errors
        return other

    def __bool__(self) -> bool:
        return bool(self.prompts or self.resources)

    # -- listings

    def list_prompts(self) -> list[dict[str, Any]]:
        """The ``prompts`` of a ``prompts/list`` result."""
        out = []
        for p in self.prompts.values():
            item: dict[str, Any] = {"name": p.name, "description": p.description}
            if p.title:
                item["title"] = p.title
            item["arguments"] = [
                {k: v for k, v in (("name", a.name), ("description", a.description),
                                   ("required", a.required)) if v is not None}
                for a in p.arguments
            ]
            out.append(item)
        return out

    def list_resources(self) -> list[dict[str, Any]]:
        """The ``resources`` of a ``resources/list`` result (static resources only)."""
        return [self._listed(r, "uri") for r in self.resources if not r.templated]

    def list_templates(self) -> list[dict[str, Any]]:
        """The ``resourceTemplates`` of a ``resources/templates/list`` result."""
        return [self._listed(r, "uriTemplate") for r in self.resources if r.templated]

    @staticmethod
    def _listed(r: Resource, key: str) -> dict[str, Any]:
        item: dict[str, Any] = {key: r.uri, "name": r.name}
        for k, v in (("title", r.title), ("description", r.description),
                     ("mimeType", r.mime_type)):
            if v:
                item[k] = v
        return item

    # -- prompts/get

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """A ``prompts/get`` result: the prompt's description and rendered messages.

        Raises:
            UnknownPrompt: No prompt has that name.
            PromptArgumentsError: A required argument is missing, or one is unknown or not
                a string.
            OfferingFailed: The prompt's function raised or returned bad content.
        """
        p = self.prompts.get(name)
        if p is None:
            known = ", ".join(sorted(self.prompts)) or "none"
            raise UnknownPrompt(f"Unknown prompt: {name!r} (this server offers: {known})")
        args = dict(arguments or {})
        names = [a.name for a in p.arguments]
        missing = [a.name for a in p.arguments if a.required and a.name not in args]
        unknown = [k for k in args if k not in names]
        wrong = [k for k, v in args.items() if k in names and not isinstance(v, str)]
        if missing or unknown or wrong:
            parts = []
            if missing:
                parts.append(f"missing required argument(s) {', '.join(missing)}")
            if unknown:
                parts.append(f"unknown argument(s) {', '.join(unknown)}")
            if wrong:
                parts.append(f"argument(s) {', '.join(wrong)} must be strings")
            raise PromptArgumentsError(
                f"prompt {name!r}: {'; '.join(parts)}; it takes "
                f"{', '.join(names) or 'no arguments'}"
            )
        try:
            value = await _call(p.fn, args)
            messages = [self._message(m) for m in (value if type(value) is list else [value])]
        except OfferingFailed:
            raise  # already says what failed (a mounted server's refusal)
        except Exception as exc:
            raise self._failed(f"prompt {name!r}", exc) from None
        result: dict[str, Any] = {"messages": messages}
        if p.description:
            result["description"] = p.description
        return result

    @staticmethod
    def _message(item: Any) -> dict[str, Any]:
        role, content = ("user", item)
        if isinstance(item, PromptMessage):
            role, content = item.role, item.content
        if isinstance(content, dict) and "type" in content:
            return {"role": role, "content": content}
        blocks = mcp_blocks(resolve([content], str))
        return {"role": role, "content": blocks[0]}

    # -- resources/read

    def find(self, uri: str) -> tuple[Resource, dict[str, str]]:
        """The resource answering ``uri`` and its template parameters.

        Raises:
            UnknownResource: No static resource has that URI and no template matches it.
        """
        for r in self.resources:
            params = r.match(uri)
            if params is not None:
                return r, params
        raise UnknownResource(f"Resource not found: {uri!r} (no resource or template of this "
                              "server matches it; resources/list and resources/templates/list "
                              "show what it offers)")

    async def read(self, uri: str) -> dict[str, Any]:
        """A ``resources/read`` result: the ``contents`` of the resource at ``uri``.

        Raises:
            UnknownResource: Nothing answers ``uri``.
            OfferingFailed: The resource's function raised or returned bad content.
        """
        r, params = self.find(uri)
        try:
            value = await _call(r.fn, params)
            contents = [self._contents(r, uri, v) for v in
                        (value if type(value) is list else [value])]
        except OfferingFailed:
            raise
        except Exception as exc:
            raise self._failed(f"resource {uri!r}", exc) from None
        return {"contents": contents}

    @staticmethod
    def _contents(r: Resource, uri: str, value: Any) -> dict[str, Any]:
        if isinstance(value, EmbeddedResource):
            block = mcp_blocks(resolve([value], str))[0]["resource"]
            return dict(block)
        if isinstance(value, dict) and isinstance(value.get("uri"), str) and (
            isinstance(value.get("text"), str) or isinstance(value.get("blob"), str)
        ):
            return value  # already MCP resource contents (a mounted server's)
        if isinstance(value, bytes | bytearray):
            mime = r.mime_type or "application/octet-stream"
            return {"uri": uri, "mimeType": mime, "blob": base64.b64encode(value).decode()}
        if isinstance(value, str):
            return {"uri": uri, "mimeType": r.mime_type or "text/plain", "text": value}
        raise BadContent(
            f"returned {type(value).__name__}; return str, bytes, EmbeddedResource or a list"
        )

    def _failed(self, what: str, exc: Exception) -> OfferingFailed:
        logger.warning("%s failed", what, exc_info=exc)
        detail = f"{type(exc).__name__}: {exc}" if self.expose_errors or isinstance(
            exc, BadContent) else type(exc).__name__
        return OfferingFailed(f"{what} failed ({detail})")

    # -- completion/complete

    async def complete(
        self, ref: dict[str, Any], argument: str, value: str
    ) -> dict[str, Any]:
        """A ``completion/complete`` result for ``argument`` of a prompt or template.

        An unknown reference is answered with no values (as the SDK's server does for a
        reference it has no completer for).

        Raises:
            OfferingFailed: The completer raised.
        """
        completer = None
        if ref.get("type") == "ref/prompt":
            p = self.prompts.get(str(ref.get("name")))
            completer = p.complete if p else None
        elif ref.get("type") == "ref/resource":
            uri = str(ref.get("uri"))
            r = next((r for r in self.resources if r.uri == uri), None)
            completer = r.complete if r else None
        values: list[str] = []
        if completer is not None:
            try:
                found = completer(argument, value)
                if inspect.isawaitable(found):
                    found = await found
                values = [str(v) for v in found]
            except Exception as exc:
                raise self._failed(f"completion of {argument!r}", exc) from None
        return {
            "values": values[:MAX_COMPLETIONS],
            "total": len(values),
            "hasMore": len(values) > MAX_COMPLETIONS,
        }

    # -- subscriptions

    def subscribe(self, uri: str, listener: Listener) -> None:
        """Call ``listener(uri)`` when the resource answering ``uri`` says it changed.

        Raises:
            UnknownResource: Nothing answers ``uri``.
        """
        r, _ = self.find(uri)
        r.listeners.add(_Filtered(uri, listener))

    def unsubscribe(self, uri: str, listener: Listener) -> None:
        """Stop ``subscribe(uri, listener)`` (nothing happens when it was not subscribed)."""
        for r in self.resources:
            if r.match(uri) is not None:
                r.listeners.discard(_Filtered(uri, listener))


class _Filtered:
    """A listener for one URI of a resource (equal by URI and listener, for unsubscribe)."""

    __slots__ = ("listener", "uri")

    def __init__(self, uri: str, listener: Listener) -> None:
        self.uri = uri
        self.listener = listener

    def __call__(self, uri: str) -> None:
        if uri == self.uri:
            self.listener(uri)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Filtered) and (other.uri, other.listener) == (
            self.uri, self.listener)

    def __hash__(self) -> int:
        return hash((self.uri, id(self.listener)))
