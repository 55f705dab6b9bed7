"""RFC 9728 protected resource metadata, and where clients find it.

Each agent's endpoint is a protected resource: its metadata is at
``/.well-known/oauth-protected-resource`` followed by the endpoint's path (``/agents/NAME/mcp``,
and ``/mcp`` when one agent is served), and every 401 names it in ``WWW-Authenticate:
Bearer resource_metadata="..."`` so an MCP client can discover the authorization server.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolpacks.host.config._auth import AuthConfig

__all__ = ["WELL_KNOWN", "base_url", "resource_metadata"]

WELL_KNOWN = "/.well-known/oauth-protected-resource"


def base_url(config: AuthConfig | None, headers: Iterable[tuple[bytes, bytes]], scheme: str) -> str:
    """This server's public base URL: ``[auth] resource_url``, else the request's own."""
    if config is not None and config.resource_url:
        return config.resource_url.rstrip("/")
    host = next((v for k, v in headers if k == b"host"), b"localhost").decode("latin-1")
    return f"{scheme}://{host}"


def resource_metadata(
    config: AuthConfig, resource: str, agent_scopes: Iterable[str]
) -> dict[str, Any]:
    """The metadata document of the resource at ``resource`` (an absolute URL)."""
    scopes = sorted({*config.scopes_supported, *agent_scopes})
    return {
        "resource": resource,
        "authorization_servers": [config.issuer],
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
    }
