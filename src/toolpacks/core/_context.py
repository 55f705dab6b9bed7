"""The context injected into tools that ask for it."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolpacks.core._principal import Principal

__all__ = ["CancelEvent", "ToolContext"]

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

    def __post_init__(self) -> None:
        if self.caller_identity is None and self.principal is not None:
            object.__setattr__(self, "caller_identity", self.principal.subject)

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
