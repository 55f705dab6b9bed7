"""How to reach one MCP server: a command to start (stdio) or a URL (streamable HTTP).

``ServerSpec`` is the resolved form of an ``[mcp_servers.NAME]`` table: environment names
copied, header values read from the environment, paths resolved. Nothing here imports the MCP
SDK, so the configuration can be validated without it.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol
from urllib.parse import urlsplit

from toolpacks.packs._trust import fingerprint

__all__ = [
    "ServerSpec",
    "code_fingerprint",
    "resolve_headers",
    "server_environment",
    "shown_url",
    "transport_problem",
]

_STDIO_ONLY = ("args", "env", "cwd")
"""Keys that only mean something for a server started from ``command``."""


class TransportSettings(Protocol):
    """The keys of an ``[mcp_servers.NAME]`` table that choose and shape the transport."""

    @property
    def command(self) -> str | None:
        """The program to start over stdio."""

    @property
    def url(self) -> str | None:
        """The streamable HTTP endpoint."""

    @property
    def headers(self) -> Mapping[str, str | Mapping[str, str]]:
        """HTTP headers; a value may be ``{ env = "VAR" }``."""


def transport_problem(cfg: TransportSettings) -> str | None:
    """Why ``cfg`` cannot be a server table (for the configuration's validation), or None.

    Exactly one of ``command`` and ``url`` is required; ``url`` must be an ``http(s)://`` URL
    with a host; ``headers`` need ``url``; ``args``, ``env`` and ``cwd`` need ``command``; a
    table as a header value must be ``{ env = "VAR" }``.
    """
    if cfg.command is not None and cfg.url is not None:
        return (
            "set either `command` (a server started over stdio) or `url` (streamable HTTP), "
            "not both"
        )
    if cfg.command is None and cfg.url is None:
        return (
            "set `command` (a server started over stdio, with `args`) or `url` (a server reached "
            'over streamable HTTP, e.g. url = "https://example.com/mcp")'
        )
    if cfg.command is not None:
        if not cfg.command.strip():
            return "`command` is empty"
        if cfg.headers:
            return "`headers` apply to a `url` server; pass a stdio server what it needs in `env`"
        return None
    url = cfg.url or ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"`url` must be an http:// or https:// URL with a host, got {shown_url(url)!r}"
    used = [key for key in _STDIO_ONLY if getattr(cfg, key, None)]
    if used:
        return f"{', '.join(used)} only apply to a server started from `command`, not to a `url`"
    for name, value in cfg.headers.items():
        if isinstance(value, Mapping) and (
            "env" not in value or not set(value) <= {"env", "default"}
        ):
            return f'headers.{name}: a table value must be {{ env = "VARIABLE" }}'
    return None


def shown_url(url: str) -> str:
    """``url`` for messages and logs: scheme, host, port and path only (no user, no query)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<invalid URL>"
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else "<invalid URL>"


def _is_loopback(host: str | None) -> bool:
    if host in (None, "localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """How to reach one MCP server: ``command`` (stdio) or ``url`` (streamable HTTP)."""

    name: str
    """The pack name (for messages and logs)."""
    command: str | None = None
    """The program; run directly, never through a shell."""
    args: tuple[str, ...] = ()
    """Its arguments."""
    env: Mapping[str, str] = field(default_factory=dict)
    """The complete environment of the child (see ``server_environment``)."""
    cwd: Path | None = None
    """Its working directory (None: inherit)."""
    timeout: float = 30.0
    """Seconds allowed for starting (or connecting), the handshake and listing tools."""
    url: str | None = None
    """The streamable HTTP endpoint (instead of ``command``)."""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    """HTTP headers sent with every request (values resolved; never shown)."""

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """``http`` for a ``url`` server, else ``stdio``."""
        return "http" if self.url is not None else "stdio"

    def describe(self) -> str:
        """``MCP server 'time' (python -m mcp_server_time)``, for messages."""
        if self.url is not None:
            return f"MCP server {self.name!r} ({shown_url(self.url)})"
        shown = " ".join([self.command or "", *self.args])
        if len(shown) > 80:
            shown = shown[:77] + "..."
        return f"MCP server {self.name!r} ({shown})"

    def insecure(self) -> bool:
        """Whether headers would travel unencrypted to another machine (http, not loopback)."""
        if self.url is None or not self.headers:
            return False
        parts = urlsplit(self.url)
        return parts.scheme == "http" and not _is_loopback(parts.hostname)


def server_environment(
    env: Mapping[str, str] | Sequence[str], environ: Mapping[str, str] | None = None
) -> tuple[dict[str, str], list[str]]:
    """The environment a stdio server gets: the SDK's minimal set plus what ``env`` names.

    Args:
        env: Values to set, or names to copy from ``environ``.
        environ: The host environment (``os.environ`` by default).

    Returns:
        The environment, and the names in ``env`` that ``environ`` does not define.
    """
    from mcp.client.stdio import get_default_environment

    source = os.environ if environ is None else environ
    out = dict(get_default_environment())
    missing: list[str] = []
    if isinstance(env, Mapping):
        out.update({str(k): str(v) for k, v in env.items()})
    else:
        for name in env:
            if name in source:
                out[name] = source[name]
            else:
                missing.append(name)
    return out, missing


def resolve_headers(
    headers: Mapping[str, str | Mapping[str, str]], where: str, environ: Mapping[str, str]
) -> dict[str, str]:
    """Header values with ``{ env = "VAR", default = ... }`` read from ``environ``.

    Raises:
        ValueError: A variable is not set and has no default, or a value holds a line break
            (which would split the HTTP header); the message names the header, never a value.
    """
    out: dict[str, str] = {}
    for name, value in headers.items():
        if isinstance(value, Mapping):
            variable = value["env"]
            if variable in environ:
                value = environ[variable]
            elif "default" in value:
                value = value["default"]
            else:
                raise ValueError(
                    f"{where}.headers.{name}: environment variable {variable!r} is not set "
                    "(and no default is given)"
                )
        if any(ch in value for ch in "\r\n\0") or any(ch in name for ch in "\r\n\0: "):
            raise ValueError(
                f"{where}.headers.{name}: a header name or value holds a line break, NUL or "
                "(in the name) a colon or space"
            )
        out[name] = value
    return out


def code_fingerprint(spec: ServerSpec, base_dir: Path) -> str:
    """A fingerprint of the files ``command`` and ``args`` name inside ``base_dir``.

    These are the server scripts that trusting a configuration covers; a restart compares
    the fingerprint with the one taken at the first start, so a crashed server is never
    restarted from code that changed since (``Host.reload()`` starts the new code).
    """
    base = base_dir.resolve()
    where = spec.cwd.resolve() if spec.cwd is not None else base
    files: set[Path] = set()
    for word in (spec.command or "", *spec.args):
        if not word or word.startswith("-"):
            continue
        try:
            candidate = (where / word).resolve()
            if candidate.is_file() and candidate.is_relative_to(base):
                files.add(candidate)
        except (OSError, ValueError):
            continue
    return fingerprint("", files, base)
