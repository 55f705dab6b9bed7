"""How a host or toolset runs tools: ``CallOptions``."""

from __future__ import annotations

from dataclasses import dataclass, fields

from toolpacks.core._hooks import EMPTY_HOOKS, HookSet
from toolpacks.core._jsonargs import DEFAULT_LIMITS, ArgumentLimits
from toolpacks.core.define._schema import ExtraArgs

__all__ = ["DEFAULT_OPTIONS", "CallOptions"]


@dataclass(frozen=True, slots=True)
class CallOptions:
    """How a host or toolset runs tools; the defaults suit direct ``Tool.invoke`` calls."""

    hooks: HookSet = EMPTY_HOOKS
    """Global hooks that apply to the tool being called."""
    expose_errors: bool = False
    """Send a failing tool's exception message to the model (trusted development only);
    by default the model sees the tool name and exception type, and the log gets the rest."""
    limits: ArgumentLimits = DEFAULT_LIMITS
    """Caps on JSON arguments (size, depth, integer length)."""
    extra_args: ExtraArgs | None = None
    """Override the tool's own policy for undeclared arguments (``None`` keeps it)."""
    max_content_chars: int = 100_000
    """Results whose text is longer are truncated with a marker."""
    redact: tuple[str, ...] = ()
    """Secret values to scrub from error messages and hook payloads."""

    def __repr__(self) -> str:
        """Every field, with the secret values to scrub counted rather than shown."""
        shown = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "redact":
                shown.append(f"redact=<{len(value)} value{'' if len(value) == 1 else 's'}>")
            else:
                shown.append(f"{f.name}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"


DEFAULT_OPTIONS = CallOptions()
