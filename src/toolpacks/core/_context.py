"""The context injected into tools that ask for it."""

from __future__ import annotations

import threading
from collections.abc import Coroutine, Generator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolpacks.core._principal import Principal

if TYPE_CHECKING:
    import asyncio
    import concurrent.futures

    from toolpacks.core._channel import Channel, Elicitation, LogLevel, Sample
    from toolpacks.core._credentials import CallCredentials

__all__ = ["CancelEvent", "Delivery", "ToolContext"]

_lock = threading.Lock()


class CancelEvent:
    """A cancellation flag with ``threading.Event``'s interface, cheap to create.

    Every call gets a fresh one, and most are never waited on: the ``threading.Event`` that
    ``wait`` needs (a lock and a condition) is made only when someone waits.
    """

    __slots__ = ("_event", "_flag")

    def __init__(self) -> None:
        self._flag = False
        self._event: threading.Event | None = None

    def is_set(self) -> bool:
        """Whether the call has been cancelled."""
        return self._flag

    def set(self) -> None:
        """Cancel (idempotent); wakes every waiter."""
        with _lock:
            self._flag = True
            event = self._event
        if event is not None:
            event.set()

    def clear(self) -> None:
        """Reset the flag (``threading.Event`` compatibility)."""
        with _lock:
            self._flag = False
            if self._event is not None:
                self._event.clear()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled or ``timeout`` seconds pass; whether it was cancelled."""
        with _lock:
            if self._event is None:
                self._event = threading.Event()
                if self._flag:
                    self._event.set()
            event = self._event
        return event.wait(timeout)


_held: set[Any] = set()


def _done(task: Any) -> None:
    _held.discard(task)
    if not task.cancelled() and task.exception() is not None:
        import logging

        logging.getLogger("toolpacks").warning(
            "a progress or log message could not be sent: %r", task.exception()
        )


class Delivery:
    """A progress or log message on its way; ``await`` it (in async code) to wait until sent."""

    __slots__ = ("_future",)

    def __init__(self, future: asyncio.Future[None] | concurrent.futures.Future[None] | None):
        self._future = future

    def __await__(self) -> Generator[Any, None, None]:
        import asyncio
        import concurrent.futures

        future = self._future
        if future is None:
            return
        if isinstance(future, concurrent.futures.Future):
            future = asyncio.wrap_future(future)
        yield from asyncio.shield(future).__await__()


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool knows about the call it is serving.

    A tool receives it by declaring a parameter annotated ``ToolContext`` (any name); that
    parameter never appears in the tool's input schema. Applications pass one to
    ``Tool.invoke`` or ``Toolset.call`` to say who is calling; toolpacks fills in the rest.
    """

    call_id: str = ""
    """The id of this call (the provider's tool-call id when there is one)."""
    agent_id: str | None = None
    """The agent whose toolset is making the call, if any."""
    caller_identity: str | None = None
    """Who the agent acts for (a user or service id): the principal's subject when there is
    a principal and this is not set."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Free-form data from the application, read-only by convention."""
    invocation_state: dict[str, Any] = field(default_factory=dict)
    """Mutable state shared by the calls of one agent invocation (the application's dict)."""
    tool_name: str | None = None
    """The name of the tool being run (filled in by toolpacks)."""
    cancel_event: CancelEvent | threading.Event = field(default_factory=CancelEvent, repr=False)
    """Set when the call is cancelled or timed out; sync tools should poll it.

    Every call gets a fresh event, so a context the application reuses for several calls is
    never left cancelled by one of them."""
    principal: Principal | None = None
    """Who the call is made for, with its scopes: from a verified token over HTTP, or the
    application's own. Tools with ``scopes`` refuse a call without one (fail closed)."""
    credentials: CallCredentials | None = field(default=None, repr=False, compare=False)
    """The credentials resolved for this call (the tool's declared ones, for its principal),
    put here by the toolset; read them with ``credential(name)``."""

    channel: Channel | None = field(default=None, repr=False, compare=False)
    """How the tool reaches its caller (progress, logs, elicitation, sampling): the MCP
    server's, or the application's ``CallHandlers``; None: progress and logs go nowhere
    but the ``toolpacks.tool`` logger, and asking raises ``ChannelError``."""
    _loop: asyncio.AbstractEventLoop | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.caller_identity is None and self.principal is not None:
            object.__setattr__(self, "caller_identity", self.principal.subject)
        if self.channel is not None:  # the loop the call runs on, for sync tools' messages
            import asyncio
            import contextlib

            # made outside a loop: none to send a sync tool's messages on (they are dropped)
            with contextlib.suppress(RuntimeError):
                object.__setattr__(self, "_loop", asyncio.get_running_loop())

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> Delivery:
        """Tell the caller how far the call has come (MCP ``notifications/progress``).

        Works from sync and async tools alike: the message is queued at once, in order;
        an async tool may ``await`` the returned ``Delivery`` to wait until it is sent.
        Dropped when the caller asked for no progress (no MCP progress token, no handler).

        Args:
            progress: How much is done (increases with each report).
            total: How much there is to do, if known.
            message: A short note for the user.
        """
        if self.channel is None:
            return Delivery(None)
        return self._deliver(self.channel.progress(float(progress), total, message))

    def log(self, level: LogLevel, message: str) -> Delivery:
        """Send a log message to the caller (MCP ``notifications/message``).

        Works from sync and async tools alike, as ``report_progress``. Over MCP, messages
        below the client's ``logging/setLevel`` level are not sent. Without a channel the
        message goes to the ``toolpacks.tool`` logger.

        Args:
            level: ``debug``, ``info``, ``notice``, ``warning``, ``error``, ``critical``,
                ``alert`` or ``emergency``.
            message: The text.

        Raises:
            ValueError: ``level`` is not one of those.
        """
        from toolpacks.core._channel import LOG_LEVELS, log_locally

        if level not in LOG_LEVELS:
            raise ValueError(f"log level {level!r} is not one of {', '.join(LOG_LEVELS)}")
        if self.channel is None:
            log_locally(level, message, self.tool_name)
            return Delivery(None)
        return self._deliver(self.channel.log(level, message, self.tool_name))

    async def elicit(self, message: str, schema: Any) -> Elicitation:
        """Ask the user for input through the caller (MCP elicitation, form mode).

        Args:
            message: What to ask.
            schema: The form: a JSON Schema object (flat, primitive properties) or a
                pydantic model class (then an accepted answer's ``content`` is an instance).

        Returns:
            The answer: ``action`` is ``accept``, ``decline`` or ``cancel``; ``content`` the
            accepted answer, validated against ``schema``.

        Raises:
            ChannelError: The caller cannot ask the user (no handler, or an MCP client
                without the elicitation capability), or the answer does not match
                ``schema`` (the tool never sees it). Unhandled, the call ends with an
                error result saying so.
        """
        from toolpacks.core._channel import Channel, answer_of, elicitation_schema

        sent, model = elicitation_schema(schema)
        channel = self.channel if self.channel is not None else Channel()
        return answer_of(await channel.elicit(message, sent), sent, model)

    async def sample(
        self,
        messages: Any,
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: list[str] | None = None,
        model_preferences: Mapping[str, Any] | None = None,
        include_context: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Sample:
        """Ask the caller's model for a completion (MCP sampling).

        Args:
            messages: A text (one user message), or a list of texts (user first, then
                alternating), ``(role, text)`` pairs or MCP ``SamplingMessage`` dicts.
            max_tokens: The most tokens the answer may have.
            system_prompt: A system prompt the client may use.
            temperature: Sampling temperature, if any.
            stop_sequences: Where the model should stop.
            model_preferences: MCP model preferences (hints, priorities).
            include_context: MCP ``includeContext`` (``none``, ``thisServer``, ``allServers``).
            metadata: Provider-specific metadata.

        Raises:
            ChannelError: The caller cannot sample (no handler, or an MCP client without the
                sampling capability). Unhandled, the call ends with an error result.
        """
        from toolpacks.core._channel import Channel, sample_of, sampling_params

        params = sampling_params(
            messages,
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            temperature=temperature,
            stop_sequences=stop_sequences,
            model_preferences=model_preferences,
            include_context=include_context,
            metadata=metadata,
        )
        channel = self.channel if self.channel is not None else Channel()
        return sample_of(await channel.sample(params))

    def _deliver(self, coro: Coroutine[Any, Any, None]) -> Delivery:
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        channel = self.channel
        assert channel is not None
        if loop is not None:
            task = loop.create_task(coro)
            _held.add(task)
            task.add_done_callback(_done)
            channel.track(task)
            return Delivery(task)
        if self._loop is None or self._loop.is_closed():
            coro.close()
            return Delivery(None)
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        self._loop.call_soon_threadsafe(channel.track, future)
        return Delivery(future)

    def credential(self, name: str) -> str:
        """The calling principal's value of the credential ``name`` (``[credentials.NAME]``).

        Synchronous: the toolset resolved the tool's declared credentials before the run
        (refreshing an expired OAuth token), so no store is read here. An ``oauth2``
        credential's value is its access token.

        Raises:
            CredentialError: The tool did not declare ``name``, or the call carries no
                credentials (not run through a toolset with ``[credentials]``). Unhandled,
                the call ends with an error result saying so.
        """
        if self.credentials is None:
            from toolpacks.core._credentials import no_credentials

            raise no_credentials(name, self.tool_name)
        return self.credentials.get(name, self.tool_name)

    @property
    def execution_id(self) -> str:
        """The call id, under the name some frameworks use."""
        return self.call_id

    @property
    def cancelled(self) -> bool:
        """Whether the call has been cancelled (or has timed out)."""
        return self.cancel_event.is_set()

    def cancel(self) -> None:
        """Signal cancellation to the tool (idempotent)."""
        self.cancel_event.set()
