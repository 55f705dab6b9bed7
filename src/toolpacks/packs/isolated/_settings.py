"""What an isolated pack's table may say: its requirement, its limits and what reaches it.

``[isolated.NAME]`` holds a ``requirement`` (a pip requirement, a local path or a wheel) and
the limits; ``[packs.NAME] isolate = true`` (or ``isolate = { memory_mb = 1024 }``) holds the
limits of an installed pack run in a child process of the host's own environment. Both
validate into the models here, which the host's configuration uses. Nothing here starts a
process.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from toolpacks.core._secrets import REDACTED, redact

__all__ = [
    "ISOLATE_KEY",
    "IsolatedConfig",
    "IsolationLimits",
    "isolation_of",
]

ISOLATE_KEY = "isolate"
"""The key of a ``[packs.NAME]`` table that runs the pack in a child process."""


class IsolationLimits(BaseModel):
    """The limits and the environment of one isolated pack's child process.

    The defaults are safe for ordinary tools: 2 GiB of address space (Python with its
    libraries reserves a few hundred MiB of it before running anything), 60 CPU seconds per
    call, 256 open files and nothing from the host's environment but a minimal set.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    memory_mb: int = Field(default=2048, ge=64)
    """The child's address space in MiB (``RLIMIT_AS``); an allocation past it fails with
    ``MemoryError`` in the tool that made it."""
    cpu_seconds: float = Field(default=60.0, gt=0)
    """CPU seconds one call may use; the child is killed and restarted past it."""
    open_files: int = Field(default=256, ge=16)
    """Open file descriptors the child may hold (``RLIMIT_NOFILE``)."""
    env: dict[str, str] | list[str] = Field(default_factory=list)
    """Variables it gets: values, or names copied from the host's environment. Nothing
    else of the host's environment reaches it but ``PATH``, ``LANG`` and a private
    ``HOME`` and ``TMPDIR``; secrets go in the pack's settings."""
    timeout: float = Field(default=60.0, gt=0)
    """Seconds allowed for the child to start and list its tools."""
    sandbox: Literal["auto", "required", "off"] = "auto"
    """``auto``: the child reads and writes only what is granted where the system can
    (Landlock), and runs without a sandbox elsewhere, saying so in the log and in doctor;
    ``required``: refuse to start without it; ``off``: no sandbox."""
    read: list[str] = Field(default_factory=list)
    """Absolute paths the sandboxed child may read beneath, besides its own environment."""
    write: list[str] = Field(default_factory=list)
    """Absolute paths it may write beneath, besides its private directories."""
    network: bool = True
    """``false``: the sandboxed child can neither connect nor bind a TCP port."""

    @field_validator("read", "write")
    @classmethod
    def _grants(cls, value: list[str], info: Any) -> list[str]:
        """Each grant as its real path (a symlink never widens it), checked."""
        from toolpacks.packs.sandbox._rules import checked_grant

        return [checked_grant(entry, info.field_name) for entry in value]

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        """The fields for ``repr()``, environment values hidden."""
        for name, value in super().__repr_args__():
            if name == "env" and isinstance(value, Mapping):
                yield name, dict.fromkeys(value, REDACTED)
            else:
                yield name, redact(value)

    def shown(self) -> dict[str, Any]:
        """The limits for ``doctor`` (environment names only)."""
        env = list(self.env)  # names only, never values
        return {
            "memory_mb": self.memory_mb,
            "cpu_seconds": self.cpu_seconds,
            "open_files": self.open_files,
            "env": env,
            "timeout": self.timeout,
            "sandbox": self.sandbox,
            "read": list(self.read),
            "write": list(self.write),
            "network": self.network,
        }


class IsolatedConfig(IsolationLimits):
    """``[isolated.NAME]``: a pack in an environment of its own, in a child process."""

    requirement: str = Field(min_length=1)
    """What to install: ``toolpacks-weather>=1.2``, a local directory or a wheel."""


def isolation_of(table: Mapping[str, Any], where: str) -> IsolationLimits | None:
    """The limits a ``[packs.NAME]`` table asks for with ``isolate``, or None when it does not.

    Raises:
        ValueError: ``isolate`` is neither a boolean nor a table of limits, or a limit is
            invalid; the message names the key.
    """
    value = table.get(ISOLATE_KEY)
    if value is None or value is False:
        return None
    if value is True:
        return IsolationLimits()
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}.{ISOLATE_KEY} must be true, false or a table of limits")
    try:
        return IsolationLimits.model_validate(dict(value))
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        key = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{where}.{ISOLATE_KEY}.{key}: {first['msg']}") from None
