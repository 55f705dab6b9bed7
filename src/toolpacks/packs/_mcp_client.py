"""Remote MCP servers as packs: ``[mcp_servers.NAME]`` becomes the pack ``NAME``.

``Host`` calls ``load_mcp_pack`` when a toolset first needs the pack. The server is started
(see ``_mcp_connection``), its tools are listed, and each becomes a ``Tool`` whose schema,
output schema, title and behaviour hints come from the server, so it is namespaced, filtered,
validated and called like any other. A server that cannot start is a ``failed`` pack with the
reason; one that dies later turns its calls into error results and its pack into ``failed``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import importlib.util
import inspect
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from toolpacks.core._names import safe_name
from toolpacks.core._secrets import REDACTED, is_secret_key, is_secret_value, scrub
from toolpacks.core._tool import Tool
from toolpacks.exceptions import PackError, ToolError
from toolpacks.packs._loading import LoadedPack, PackInfo

if TYPE_CHECKING:
    import mcp_types

    from toolpacks.packs._mcp_connection import McpConnection

__all__ = ["content_text", "load_mcp_pack", "result_value"]

logger = logging.getLogger("toolpacks.mcp")


class McpServerSettings(Protocol):
    """What mounting a server needs of its ``[mcp_servers.NAME]`` table (the host's model)."""

    @property
    def command(self) -> str:
        """The program to start (never run through a shell)."""

    @property
    def args(self) -> Sequence[str]:
        """Its arguments."""

    @property
    def env(self) -> Mapping[str, str] | Sequence[str]:
        """Values to set, or names of variables to copy from the host's environment."""

    @property
    def cwd(self) -> str | None:
        """Working directory, relative to the configuration's directory."""

    @property
    def timeout(self) -> float:
        """Seconds allowed for starting, the handshake and listing tools; and per call."""

    @property
    def tags(self) -> Sequence[str]:
        """Tags given to every tool of the server."""


_UNTYPED = inspect.Signature([inspect.Parameter("arguments", inspect.Parameter.VAR_KEYWORD)])


def load_mcp_pack(
    info: PackInfo,
    cfg: McpServerSettings,
    base_dir: Path,
    environ: Mapping[str, str] | None = None,
) -> LoadedPack:
    """Start the MCP server ``cfg`` describes and make its tools the pack ``info.name``.

    Never raises: a server that cannot be started (command not found, exits during startup,
    no answer within ``cfg.timeout``) gives a ``failed`` pack whose error says why.

    Args:
        info: The pack's identity (``source == "mcp"``).
        cfg: The ``[mcp_servers.NAME]`` table.
        base_dir: The directory a relative ``cwd`` is resolved against.
        environ: The host environment that names in ``cfg.env`` are copied from
            (``os.environ`` by default); nothing else of it reaches the server.
    """
    started = time.perf_counter()

    def failed(error: str) -> LoadedPack:
        elapsed = time.perf_counter() - started
        logger.warning("%s failed to load: %s", info.describe(), error)
        return LoadedPack(replace(info, status="failed", error=error, import_seconds=elapsed))

    if importlib.util.find_spec("mcp") is None:  # the optional extra is missing
        return failed(
            "the MCP SDK is not installed, so MCP servers cannot be started; "
            "install it with `pip install 'toolpacks[mcp]'`"
        )
    from toolpacks.packs._mcp_connection import McpConnection, ServerSpec, server_environment

    env, missing = server_environment(cfg.env, environ)
    problems = [
        f"environment variable {name!r} listed in mcp_servers.{info.name}.env is not set; "
        "the server runs without it"
        for name in missing
    ]
    spec = ServerSpec(
        name=info.name,
        command=cfg.command,
        args=tuple(cfg.args),
        env=env,
        cwd=(base_dir / cfg.cwd) if cfg.cwd else None,
        timeout=cfg.timeout,
    )
    secrets = _secret_values(env)
    loaded: list[LoadedPack] = []

    def on_lost(reason: str) -> None:
        error = _scrub(f"{spec.describe()} stopped after it was loaded: {reason}", secrets)
        for pack in loaded:
            pack.info = replace(pack.info, status="failed", error=error)

    connection = McpConnection(spec, on_lost=on_lost)
    try:
        remote_tools = connection.start()
    except PackError as exc:
        return failed(_scrub(str(exc), secrets))
    tools, naming_problems = build_tools(connection, remote_tools, info.name, cfg)
    problems.extend(naming_problems)
    elapsed = time.perf_counter() - started
    pack = LoadedPack(
        replace(info, status="loaded", tools=tuple(tools), import_seconds=elapsed),
        tools,
        problems=problems,
        closer=connection.close,
    )
    loaded.append(pack)
    if connection.lost_reason is not None:  # it died while its tools were being built
        on_lost(connection.lost_reason)
    return pack


def build_tools(
    connection: McpConnection,
    remote_tools: list[mcp_types.Tool],
    pack: str,
    cfg: McpServerSettings,
) -> tuple[dict[str, Tool], list[str]]:
    """One ``Tool`` per remote tool, keyed by qualified name; and naming problems."""
    tools: dict[str, Tool] = {}
    problems: list[str] = []
    for remote in remote_tools:
        name = _tool_name(remote.name)
        if f"{pack}.{name}" in tools:
            digest = hashlib.sha256(remote.name.encode()).hexdigest()[:8]
            name = f"{name[:55]}_{digest}"
            problems.append(
                f"tool {remote.name!r} is exposed as {name!r}: its sanitized name collides with "
                "another tool of the server"
            )
        elif name != remote.name:
            logger.debug("pack %r: remote tool %r is named %r", pack, remote.name, name)
        try:
            t = _remote_tool(connection, remote, name, cfg)
        except Exception as exc:  # a definition toolpacks cannot accept: skip that tool only
            problems.append(f"tool {remote.name!r} was skipped: {exc}")
            logger.warning("pack %r: remote tool %r skipped: %s", pack, remote.name, exc)
            continue
        t.pack = pack
        tools[f"{pack}.{name}"] = t
    return tools, problems


def _tool_name(remote_name: str) -> str:
    """A valid toolpacks tool name for a remote tool (MCP allows ``.``, ``/``, 128 chars)."""
    name = safe_name(remote_name)
    return "_" + name[1:] if name.startswith("-") else name


class _RemoteCall:
    """The function behind a remote tool: sends ``tools/call`` and converts the result."""

    # No annotations, so ``Tool`` validates arguments against the server's JSON Schema.
    __signature__ = _UNTYPED

    def __init__(self, connection: McpConnection, remote_name: str) -> None:
        self.connection = connection
        self.remote_name = remote_name
        self.__name__ = remote_name
        self.__qualname__ = f"mcp:{connection.spec.name}.{remote_name}"

    async def __call__(self, **arguments: Any) -> Any:
        result = await _call_remote(self.connection, self.remote_name, arguments)
        return result_value(result)


async def _call_remote(
    connection: McpConnection, name: str, arguments: dict[str, Any]
) -> mcp_types.CallToolResult:
    from mcp import MCPError
    from pydantic import ValidationError

    server = connection.spec.name
    try:
        return await connection.call_tool(name, arguments)
    except MCPError as exc:
        # A protocol-level error: the server's own message (unknown tool, invalid params).
        raise ToolError(f"the MCP server '{server}' refused the call: {exc.message}") from None
    except ValidationError:
        logger.exception("MCP server %r returned an invalid result for %r", server, name)
        raise ToolError(
            f"the MCP server '{server}' returned a result that is not valid MCP"
        ) from None
    except RuntimeError as exc:
        logger.warning("MCP server %r, tool %r: %s", server, name, exc)
        if "structured content" in str(exc):  # the SDK checks it against the output schema
            raise ToolError(
                f"the MCP server '{server}' returned structured content that does not match "
                "the tool's output schema"
            ) from None
        raise ToolError(f"the MCP server '{server}' could not complete the call") from None


def _remote_tool(
    connection: McpConnection, remote: mcp_types.Tool, name: str, cfg: McpServerSettings
) -> Tool:
    hints = remote.annotations
    title = remote.title or (hints.title if hints is not None else None)
    t = Tool(
        _RemoteCall(connection, remote.name),
        name=name,
        description=remote.description or title or remote.name,
        input_schema=remote.input_schema,
        tags=cfg.tags,
        title=title,
        read_only=hints.read_only_hint if hints is not None else None,
        destructive=hints.destructive_hint if hints is not None else None,
        idempotent=hints.idempotent_hint if hints is not None else None,
        open_world=hints.open_world_hint if hints is not None else None,
        timeout=cfg.timeout,
        # The MCP client already checks structured content against the output schema.
        validate_output=False,
    )
    if remote.output_schema is not None:
        t._output_schema = dict(remote.output_schema)
    return t


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


def _secret_values(env: dict[str, str]) -> list[str]:
    """Values of secret-looking variables (API keys, tokens) to keep out of messages."""
    return [
        value
        for key, value in env.items()
        if len(value) >= 4 and (is_secret_key(key) or is_secret_value(value))
    ]


def _scrub(message: str, secrets: list[str]) -> str:
    return scrub(message, secrets, REDACTED)
