"""The per-call channel between a running tool and whoever called it.

A tool reaches its caller through ``ToolContext``: ``report_progress``, ``log``, ``elicit``
(ask the user) and ``sample`` (ask the caller's model). The context carries a ``Channel``:
the MCP servers give each call one that speaks to the client (notifications, and
``elicitation/create`` / ``sampling/createMessage`` requests); in-process the application
gives ``CallHandlers`` (per call in ``ToolContext(channel=...)``, or for every call of a
toolset in ``Toolset.handlers``). Without a channel, progress and log messages go nowhere
(logs go to the ``toolpacks.tool`` logger), and asking raises ``ChannelError``, which ends the
call with an error result that says what is missing; nothing ever waits for an answer that
cannot come.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolpacks.exceptions import ToolError

__all__ = [
    "LOG_LEVELS",
    "CallHandlers",
    "Channel",
    "ChannelError",
    "Elicitation",
    "LogLevel",
    "Sample",
    "answer_of",
    "elicitation_schema",
    "sample_of",
    "sampling_params",
]

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
"""The MCP (syslog) log levels, least severe first."""
LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)

_PY_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
tool_logger = logging.getLogger("toolpacks.tool")


class ChannelError(ToolError):
    """A tool asked its caller for something the caller cannot give.

    No handler for it in-process, a client without the capability over MCP, or an answer
    that does not match what was asked. Its message reaches the model unchanged.
    """


@dataclass(frozen=True, slots=True)
class Elicitation:
    """The user's answer to ``ToolContext.elicit``."""

    action: Literal["accept", "decline", "cancel"]
    """``accept`` (``content`` holds the answer), ``decline`` or ``cancel``."""
    content: Any = None
    """The answer, validated against the schema: a dict, or an instance of the pydantic
    model given as schema; None unless accepted."""

    @property
    def accepted(self) -> bool:
        """Whether the user accepted (and ``content`` holds the answer)."""
        return self.action == "accept"


@dataclass(frozen=True, slots=True)
class Sample:
    """What the caller's model answered to ``ToolContext.sample``."""

    text: str | None
    """The text of the answer (None when it is not text)."""
    model: str = ""
    """The model that answered, as the client names it."""
    stop_reason: str | None = None
    """Why the model stopped (``endTurn``, ``maxTokens``, ...), if said."""
    role: str = "assistant"
    """The role of the answer."""
    raw: Mapping[str, Any] = field(default_factory=dict)
    """The whole ``CreateMessageResult`` as sent."""


class Channel:
    """How a call reaches its caller; servers and ``CallHandlers`` subclass it.

    Every method is a coroutine run on the event loop the call started on (``loop``). The
    defaults: progress and log messages are dropped, asking raises ``ChannelError``.
    """

    loop: asyncio.AbstractEventLoop | None = None
    """The loop the methods run on (set by the call when it starts, if not set before)."""
    _pending: set[Any] | None = None

    def track(self, future: Any) -> None:
        """Remember a message on its way (``drain`` waits for it)."""
        if self._pending is None:
            self._pending = set()
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)

    async def drain(self, within: float = 2.0) -> None:
        """Wait (at most ``within`` seconds) until the messages on their way are sent.

        The server calls it before the result goes out, so a sync tool's last progress
        report, sent from its thread, does not arrive after the result.
        """
        if not self._pending:
            return
        waits = [
            f if isinstance(f, asyncio.Future) else asyncio.wrap_future(f) for f in self._pending
        ]
        await asyncio.wait(waits, timeout=within)

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Report progress (dropped unless overridden)."""

    async def log(self, level: str, message: str, logger: str | None) -> None:
        """Send a log message (dropped unless overridden)."""

    async def elicit(self, message: str, schema: dict[str, Any]) -> Mapping[str, Any]:
        """Ask the user; the raw answer ``{"action": ..., "content": {...}}``."""
        raise ChannelError(
            "this call cannot ask the user: the caller gave no elicitation handler "
            "(over MCP: the client did not declare the elicitation capability)"
        )

    async def sample(self, params: dict[str, Any]) -> Mapping[str, Any]:
        """Ask the caller's model; the raw ``CreateMessageResult``."""
        raise ChannelError(
            "this call cannot ask the caller's model: the caller gave no sampling handler "
            "(over MCP: the client did not declare the sampling capability)"
        )


ProgressHandler = Callable[[float, "float | None", "str | None"], "Awaitable[None] | None"]
LogHandler = Callable[[str, str], "Awaitable[None] | None"]
ElicitationHandler = Callable[[str, dict[str, Any]], Any]
SamplingHandler = Callable[[dict[str, Any]], Any]


class CallHandlers(Channel):
    """In-process handlers for what tools ask of their caller (each optional; sync or async).

    Give them per call (``ToolContext(channel=CallHandlers(...))``) or to every call of a
    toolset (``toolset.handlers = CallHandlers(...)``).

    Args:
        progress: ``progress(progress, total, message)``.
        log: ``log(level, message)``.
        elicitation: ``elicitation(message, schema)`` → an ``Elicitation``, or a dict
            ``{"action": ..., "content": ...}``; ``schema`` is a JSON Schema object.
        sampling: ``sampling(params)`` → a ``Sample``, the answer's text, or a
            ``CreateMessageResult`` dict; ``params`` are MCP ``sampling/createMessage``
            parameters (``messages``, ``maxTokens``, ``systemPrompt``, ...).
    """

    def __init__(
        self,
        *,
        progress: ProgressHandler | None = None,
        log: LogHandler | None = None,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
    ) -> None:
        self.progress_handler = progress
        self.log_handler = log
        self.elicitation_handler = elicitation
        self.sampling_handler = sampling

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Call the progress handler, if any."""
        if self.progress_handler is not None:
            await _maybe(self.progress_handler(progress, total, message))

    async def log(self, level: str, message: str, logger: str | None) -> None:
        """Call the log handler, if any."""
        if self.log_handler is not None:
            await _maybe(self.log_handler(level, message))

    async def elicit(self, message: str, schema: dict[str, Any]) -> Mapping[str, Any]:
        """Call the elicitation handler; refuse when there is none."""
        if self.elicitation_handler is None:
            return await super().elicit(message, schema)
        answer = await _maybe(self.elicitation_handler(message, schema))
        if isinstance(answer, Elicitation):
            return {"action": answer.action, "content": answer.content}
        return answer  # type: ignore[no-any-return]

    async def sample(self, params: dict[str, Any]) -> Mapping[str, Any]:
        """Call the sampling handler; refuse when there is none."""
        if self.sampling_handler is None:
            return await super().sample(params)
        answer = await _maybe(self.sampling_handler(params))
        if isinstance(answer, Sample):
            return answer.raw or {
                "role": answer.role,
                "content": {"type": "text", "text": answer.text or ""},
                "model": answer.model,
                "stopReason": answer.stop_reason,
            }
        if isinstance(answer, str):
            return {"role": "assistant", "content": {"type": "text", "text": answer}, "model": ""}
        return answer  # type: ignore[no-any-return]


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


# -- elicitation: the schema asked, the answer checked ---------------------------------------


def elicitation_schema(schema: Any) -> tuple[dict[str, Any], Any]:
    """The JSON Schema to send for ``schema``, and the model to check the answer with.

    ``schema`` is a JSON Schema object or a pydantic model class (the model: None for a
    plain schema).

    Raises:
        TypeError: ``schema`` is neither.
    """
    from pydantic import BaseModel

    if isinstance(schema, type) and issubclass(schema, BaseModel):
        sent = schema.model_json_schema()
        sent.pop("title", None)
        for prop in sent.get("properties", {}).values():
            if isinstance(prop, dict):
                prop.pop("title", None)
        return sent, schema
    if isinstance(schema, Mapping) and schema.get("type") == "object":
        return dict(schema), None
    raise TypeError(
        "ToolContext.elicit needs a JSON Schema object ({'type': 'object', 'properties': "
        f"...}}) or a pydantic model class, got {type(schema).__name__}"
    )


def answer_of(raw: Any, schema: dict[str, Any], model: Any) -> Elicitation:
    """The checked answer: an accepted answer that does not match the schema is refused.

    Raises:
        ChannelError: The answer is not an elicitation result, or does not match.
    """
    action = raw.get("action") if isinstance(raw, Mapping) else None
    if action not in ("accept", "decline", "cancel"):
        raise ChannelError(
            f"the answer to the elicitation is not accept, decline or cancel: {action!r}"
        )
    if action != "accept":
        return Elicitation(action)
    content = raw.get("content")
    if not isinstance(content, Mapping):
        raise ChannelError("the user accepted the elicitation but sent no answer object")
    if model is not None:
        from pydantic import ValidationError

        try:
            return Elicitation("accept", model.model_validate(dict(content)))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}"
                for e in exc.errors(include_url=False)
            )
            raise ChannelError(f"the user's answer does not match the form: {problems}") from None
    import jsonschema  # type: ignore[import-untyped,unused-ignore]  # no stubs installed

    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(dict(content)), key=lambda e: e.path
    )
    if errors:
        problems = "; ".join(
            f"{'.'.join(map(str, e.path)) or 'answer'}: {e.message}" for e in errors[:5]
        )
        raise ChannelError(f"the user's answer does not match the form: {problems}")
    return Elicitation("accept", dict(content))


# -- sampling: the request built, the answer read --------------------------------------------


def sampling_params(
    messages: Any,
    *,
    max_tokens: int,
    system_prompt: str | None,
    temperature: float | None,
    stop_sequences: list[str] | None,
    model_preferences: Mapping[str, Any] | None,
    include_context: str | None,
    metadata: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """MCP ``sampling/createMessage`` parameters.

    ``messages`` is a text (one user message), or a list of texts (alternating user and
    assistant, user first), ``(role, text)`` pairs, or MCP ``SamplingMessage`` dicts.
    """
    items = [messages] if isinstance(messages, str) else list(messages)
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            role = "user" if i % 2 == 0 else "assistant"
            out.append({"role": role, "content": {"type": "text", "text": item}})
        elif isinstance(item, tuple) and len(item) == 2:
            out.append({"role": item[0], "content": {"type": "text", "text": item[1]}})
        elif isinstance(item, Mapping) and "role" in item and "content" in item:
            out.append(dict(item))
        else:
            raise TypeError(
                "ToolContext.sample: each message is a text, a (role, text) pair or a "
                f"SamplingMessage dict; message {i} is {type(item).__name__}"
            )
    if not out:
        raise TypeError("ToolContext.sample needs at least one message")
    params: dict[str, Any] = {"messages": out, "maxTokens": max_tokens}
    for key, value in (
        ("systemPrompt", system_prompt),
        ("temperature", temperature),
        ("stopSequences", stop_sequences),
        ("modelPreferences", dict(model_preferences) if model_preferences else None),
        ("includeContext", include_context),
        ("metadata", dict(metadata) if metadata else None),
    ):
        if value is not None:
            params[key] = value
    return params


def sample_of(raw: Any) -> Sample:
    """The ``Sample`` of a ``CreateMessageResult`` dict.

    Raises:
        ChannelError: ``raw`` is not one.
    """
    if not isinstance(raw, Mapping) or "content" not in raw:
        raise ChannelError("the caller's model sent no answer (no content in its result)")
    content = raw["content"]
    blocks = content if isinstance(content, list) else [content]
    texts = [b.get("text") for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"]
    text = "".join(t for t in texts if isinstance(t, str)) if texts else None
    return Sample(
        text=text,
        model=str(raw.get("model") or ""),
        stop_reason=raw.get("stopReason"),
        role=str(raw.get("role") or "assistant"),
        raw=dict(raw),
    )


def log_locally(level: str, message: str, tool: str | None) -> None:
    """Log a tool's message to the ``toolpacks.tool`` logger (no channel to send it on)."""
    tool_logger.log(_PY_LEVELS.get(level, logging.INFO), "%s: %s", tool or "tool", message)
