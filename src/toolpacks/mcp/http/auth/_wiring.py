"""The resource server's parts built for one HTTP app from the host's configuration.

``authenticator`` reads ``[auth]``, the served agents' ``token`` and ``scopes``, and refuses a
configuration that cannot hold: an agent asking for scopes over HTTP with neither ``[auth]``
nor a token of its own (nobody could ever reach it). This is checked when the app is built
(``http_app``, ``serve --http``), not when the configuration loads: in-process applications
pass principals themselves and need neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolpacks.exceptions import ConfigError
from toolpacks.mcp.http._guard import check_token
from toolpacks.mcp.http.auth._gate import Authenticator
from toolpacks.mcp.http.auth._metadata import WELL_KNOWN, base_url, resource_metadata
from toolpacks.mcp.http.auth._static import StaticTokens, agent_tokens

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from toolpacks.host._host import Host

__all__ = ["authenticator", "metadata_routes"]


def authenticator(host: Host, agents: Sequence[str], token: str | None) -> Authenticator:
    """The token checks of an app serving ``agents`` (``token``: the server-wide one).

    Raises:
        ConfigError: An agent's ``token`` is unusable, or an agent names ``scopes`` with
            neither ``[auth]`` nor a token of its own.
        ValueError: ``token`` cannot be sent in a header.
    """
    if token is not None:
        check_token(token)
    config = host.config.config
    tables = {name: config.agents.get(name) for name in agents}
    specs = {name: t.token if t is not None else None for name, t in tables.items()}
    scopes = {
        name: tuple(getattr(t, "scopes", None) or ()) if t is not None else ()
        for name, t in tables.items()
    }
    for name, needed in scopes.items():
        if needed and config.auth is None and specs[name] is None:
            raise ConfigError(
                f"[agents.{name}] names scopes {list(needed)}, but over HTTP nothing could "
                "grant them: add an [auth] table (issuer, audience) so access tokens carry "
                f"scopes, or give the agent a token of its own ([agents.{name}] token = "
                '{ env = "VAR" })'
            )
    return Authenticator(config.auth, StaticTokens(token, agent_tokens(specs)), scopes)


def metadata_routes(auth: Authenticator, agents: Sequence[str]) -> list[Route]:
    """RFC 9728 metadata routes for each agent's endpoint (none without ``[auth]``)."""
    from starlette.routing import Route

    config = auth.config
    if config is None:
        return []

    def serve(path: str, agent: str) -> Any:
        async def metadata(request: Request) -> Response:
            from starlette.responses import JSONResponse

            base = base_url(config, request.scope["headers"], request.url.scheme)
            root = request.scope.get("root_path", "")
            body = resource_metadata(config, f"{base}{root}{path}", auth.agent_scopes[agent])
            return JSONResponse(body, headers={"Cache-Control": "max-age=300"})

        return metadata

    routes = [Route(f"{WELL_KNOWN}/agents/{a}/mcp", serve(f"/agents/{a}/mcp", a)) for a in agents]
    if len(agents) == 1:
        routes.append(Route(f"{WELL_KNOWN}/mcp", serve("/mcp", agents[0]), methods=["GET"]))
    return routes
