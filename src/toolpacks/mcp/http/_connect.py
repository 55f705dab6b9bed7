"""The server's own ``/connect/NAME`` pages: a user connects an ``oauth2`` credential.

A ``tools/call`` of a tool whose principal has not connected an ``oauth2`` credential is
answered with an MCP URL elicitation (``-32042``) pointing here, with a *ticket*: the
principal's subject and the credential, sealed (AES-GCM) with the server's connect key and
valid for ten minutes. ``GET /connect/NAME?ticket=...`` starts the authorization-code flow
with PKCE: the state it sends is sealed too and carries the subject, the credential, the code
verifier and a nonce also set as a cookie in the user's browser. ``GET /connect/callback``
refuses a state this server did not issue (it does not unseal), an expired one, and one
brought by another browser than the one that started (the nonce and cookie differ: a state
lifted from another principal's sign-in); else it exchanges the code and stores the tokens
for the ticket's subject. The key (``connect.key``, ``0600``, in the state directory) is
shared by the server's workers, so any of them may answer any step.
"""

from __future__ import annotations

import base64
import contextvars
import hmac
import json
import logging
import os
import secrets
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from toolpacks.core._credentials import ConnectRequired
    from toolpacks.host._host import Host
    from toolpacks.host.credentials._settings import CredentialConfig

__all__ = ["CONNECT_BASE", "connect_routes", "enter", "url_elicitation", "url_elicitation_error"]

logger = logging.getLogger("toolpacks.credentials")

CONNECT_BASE: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "toolpacks_connect_base", default=None
)
"""The base URL (``scheme://host``) of the request being answered, for connect URLs."""
_TTL = 600.0
_COOKIE = "toolpacks_connect"


def enter(scope: Mapping[str, Any]) -> None:
    """Note the request's base URL (from its ``Host`` header) for connect URLs."""
    headers = dict(scope.get("headers") or ())
    host = headers.get(b"host", b"").decode("latin-1")
    if host:
        CONNECT_BASE.set(f"{scope.get('scheme', 'http')}://{host}")


class _Sealer:
    """Seals small JSON values with the connect key: only this server can make or read them."""

    def __init__(self) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        from toolpacks.host.credentials._store import _key_file, state_dir
        from toolpacks.packs._statefiles import private_dir

        self._aead = AESGCM(_key_file(private_dir(state_dir()) / "connect.key"))

    def seal(self, kind: str, value: dict[str, Any]) -> str:
        nonce = os.urandom(12)
        data = json.dumps({**value, "exp": time.time() + _TTL}).encode()
        sealed = nonce + self._aead.encrypt(nonce, data, kind.encode())
        return base64.urlsafe_b64encode(sealed).decode().rstrip("=")

    def open(self, kind: str, token: str | None) -> dict[str, Any] | None:
        """The value, or None: not sealed here, for another use, or expired."""
        if not token or len(token) > 4096:
            return None
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            value = json.loads(self._aead.decrypt(raw[:12], raw[12:], kind.encode()))
        except Exception:  # InvalidTag, bad base64, bad JSON: not ours
            return None
        if not isinstance(value, dict) or float(value.get("exp", 0)) < time.time():
            return None
        return value


def _page(status: int, text: str) -> Response:
    from starlette.responses import HTMLResponse

    body = f"<!doctype html><title>toolpacks</title><p>{text}</p>"
    return HTMLResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


def connect_routes(host: Host, toolsets: list[Any]) -> list[Route]:
    """The ``/connect`` routes, and connect URLs for ``toolsets``' credential elicitations.

    Nothing when no ``[credentials.NAME]`` is ``oauth2``.
    """
    from starlette.responses import RedirectResponse
    from starlette.routing import Route

    configs: dict[str, CredentialConfig] = {
        n: c for n, c in host.config.config.credentials.items() if c.kind == "oauth2"
    }
    vaults = [t.credentials for t in toolsets if getattr(t, "credentials", None) is not None]
    if not configs or not vaults:
        return []
    sealer = _Sealer()

    def connect_url(name: str, subject: str) -> str | None:
        base = CONNECT_BASE.get()
        if base is None or name not in configs:
            return None
        return f"{base}/connect/{name}?ticket={sealer.seal('ticket', {'s': subject, 'c': name})}"

    for vault in vaults:
        vault.elicit = connect_url

    async def start(request: Request) -> Response:
        from toolpacks.host.credentials import _oauth

        name = request.path_params["credential"]
        ticket = sealer.open("ticket", request.query_params.get("ticket"))
        if name not in configs or ticket is None or ticket.get("c") != name:
            return _page(400, "This connect link is not valid (or has expired): ask again.")
        base = f"{request.url.scheme}://{request.url.netloc}"
        nonce, verifier = secrets.token_urlsafe(24), secrets.token_urlsafe(48)
        state = sealer.seal("state", {"s": ticket["s"], "c": name, "v": verifier, "n": nonce})
        pending = _oauth.begin(
            name, configs[name], f"{base}/connect/callback", verifier=verifier, state=state
        )
        response = RedirectResponse(pending.url, status_code=302)
        response.headers["Cache-Control"] = "no-store"
        response.set_cookie(
            _COOKIE,
            nonce,
            max_age=int(_TTL),
            path="/connect",
            httponly=True,
            samesite="lax",
            secure=request.url.scheme == "https",
        )
        return response

    async def callback(request: Request) -> Response:
        import asyncio

        from toolpacks.host.credentials import _oauth

        state = sealer.open("state", request.query_params.get("state"))
        if state is None:
            return _page(400, "Refused: this server did not issue that sign-in (or it expired).")
        cookie = request.cookies.get(_COOKIE, "")
        if not hmac.compare_digest(cookie.encode(), str(state.get("n", "")).encode()):
            return _page(400, "Refused: this sign-in was started in another browser.")
        if "error" in request.query_params or "code" not in request.query_params:
            return _page(400, "The authorization server did not grant access.")
        name, subject = state["c"], state["s"]
        base = f"{request.url.scheme}://{request.url.netloc}"
        sent = request.query_params.get("state", "")
        pending = _oauth.Pending("", sent, state["v"], f"{base}/connect/callback")
        try:
            stored = await asyncio.to_thread(
                _oauth.finish, name, configs[name], pending, request.query_params["code"]
            )
            await asyncio.to_thread(vaults[0].store.set, name, subject, stored)
        except _oauth.OAuthError as exc:
            logger.info("connecting %r for %r failed: %s", name, subject, exc)
            return _page(400, "The authorization server refused the sign-in: try again.")
        response = _page(200, f"Connected {name}. You can close this page and retry the call.")
        response.delete_cookie(_COOKIE, path="/connect")
        return response

    return [
        Route("/connect/callback", callback, methods=["GET"]),
        Route("/connect/{credential}", start, methods=["GET"]),
    ]


def url_elicitation(exc: ConnectRequired, modern: bool) -> dict[str, Any]:
    """The JSON-RPC error of a URL elicitation (``-32042``) asking to connect credentials.

    At 2025-11-25 each elicitation has an ``elicitationId``; 2026-07-28 dropped it.
    """
    asks = []
    for ask in exc.elicitations:
        item = {"mode": "url", "message": ask["message"], "url": ask["url"]}
        if not modern:
            item["elicitationId"] = f"connect-{ask['name']}-{secrets.token_hex(6)}"
        asks.append(item)
    return {"code": -32042, "message": str(exc), "data": {"elicitations": asks}}


def url_elicitation_error(exc: ConnectRequired) -> Exception:
    """The SDK's ``UrlElicitationRequiredError`` for the SDK road."""
    from mcp.shared.exceptions import UrlElicitationRequiredError
    from mcp_types import ElicitRequestURLParams

    asks = [
        ElicitRequestURLParams(
            message=ask["message"],
            url=ask["url"],
            elicitation_id=f"connect-{ask['name']}-{secrets.token_hex(6)}",
        )
        for ask in exc.elicitations
    ]
    return UrlElicitationRequiredError(asks, str(exc))
