"""OAuth 2 for ``kind = "oauth2"`` credentials, with authlib's httpx client (no flow of our own).

Authorization code with PKCE (S256): ``begin`` makes the authorization URL, a state and a code
verifier; ``finish`` exchanges the code; ``refresh`` uses (and keeps the rotated) refresh
token; ``revoke`` tells the server (RFC 7009). Tokens are stored as JSON in the credential
store; the value a tool sees is the access token.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolpacks.exceptions import ConfigError

if TYPE_CHECKING:
    from toolpacks.host.credentials._settings import CredentialConfig

__all__ = ["OAuthError", "Pending", "access_token", "begin", "finish", "refresh", "revoke"]

_EARLY = 30.0
"""Seconds before its expiry an access token is refreshed."""


class OAuthError(Exception):
    """The authorization server refused (a revoked or expired refresh token, a bad code)."""


@dataclass(frozen=True, slots=True)
class Pending:
    """An authorization in progress: what the callback needs to finish it."""

    url: str
    """Where to send the user."""
    state: str
    """The ``state`` the callback must bring back."""
    verifier: str
    """The PKCE code verifier (never leaves the host)."""
    redirect_uri: str
    """The redirect URI the code is bound to."""


def _authlib(module: str) -> Any:
    """An authlib module (untyped: imported by name, so mypy sees ``Any``)."""
    import importlib

    return importlib.import_module(f"authlib.{module}")


def _client(name: str, config: CredentialConfig, redirect_uri: str | None = None) -> Any:
    try:
        OAuth2Client = _authlib("integrations.httpx_client").OAuth2Client
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise ConfigError(
            f"[credentials.{name}] kind = 'oauth2' needs authlib: "
            "pip install 'toolpacks[credentials]'"
        ) from exc
    from toolpacks.host.config._load import resolve_env

    where = f"[credentials.{name}]"
    client_id = resolve_env(config.client_id, f"{where}.client_id")
    secret = resolve_env(config.client_secret, f"{where}.client_secret")
    return OAuth2Client(
        client_id=client_id,
        client_secret=secret,
        token_endpoint_auth_method="client_secret_basic" if secret else "none",
        scope=" ".join(config.scopes) or None,
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
        timeout=30.0,
    )


def begin(
    name: str,
    config: CredentialConfig,
    redirect_uri: str,
    *,
    verifier: str | None = None,
    state: str | None = None,
) -> Pending:
    """Start an authorization: the URL to send the user to, with its state and verifier.

    Fresh ones are made unless given (a server seals the principal and the verifier into
    the state it gives, so that any of its workers can finish the flow).
    """
    verifier = verifier or _authlib("common.security").generate_token(64)
    with _client(name, config, redirect_uri) as client:
        url, state = client.create_authorization_url(
            config.authorize_url, state=state, code_verifier=verifier
        )
    return Pending(url, state, verifier, redirect_uri)


def _stored(token: dict[str, Any], previous: dict[str, Any] | None = None) -> str:
    kept = {
        k: token[k]
        for k in ("access_token", "refresh_token", "token_type", "scope", "expires_at")
        if token.get(k) is not None
    }
    if "expires_at" not in kept and token.get("expires_in"):
        kept["expires_at"] = time.time() + float(token["expires_in"])
    if "refresh_token" not in kept and previous and previous.get("refresh_token"):
        kept["refresh_token"] = previous["refresh_token"]  # not rotated: keep the old one
    return json.dumps(kept)


def finish(name: str, config: CredentialConfig, pending: Pending, code: str) -> str:
    """Exchange ``code`` for tokens; the JSON to store.

    Raises:
        OAuthError: The server refused the code.
    """
    Refused = _authlib("integrations.base_client.errors").OAuthError

    with _client(name, config, pending.redirect_uri) as client:
        try:
            token = client.fetch_token(config.token_url, code=code, code_verifier=pending.verifier)
        except Refused as exc:
            raise OAuthError(f"the authorization server refused the code: {exc.error}") from None
    return _stored(dict(token))


def refresh(name: str, config: CredentialConfig, stored: str) -> str:
    """New tokens for a stored token; the JSON to store (the rotated refresh token kept).

    Raises:
        OAuthError: No refresh token, or the server refused it (revoked or expired).
    """
    Refused = _authlib("integrations.base_client.errors").OAuthError

    previous = json.loads(stored)
    if not previous.get("refresh_token"):
        raise OAuthError("the access token expired and there is no refresh token")
    with _client(name, config) as client:
        try:
            token = client.refresh_token(config.token_url, refresh_token=previous["refresh_token"])
        except Refused as exc:
            raise OAuthError(f"the authorization server refused the refresh: {exc.error}") from None
    return _stored(dict(token), previous)


def revoke(name: str, config: CredentialConfig, stored: str) -> None:
    """Revoke the stored refresh token (else the access token) at ``revocation_url``."""
    if not config.revocation_url:
        return
    token = json.loads(stored)
    hint = "refresh_token" if token.get("refresh_token") else "access_token"
    with _client(name, config) as client:
        client.revoke_token(config.revocation_url, token=token[hint], token_type_hint=hint)


def access_token(stored: str) -> tuple[str, bool]:
    """The access token of stored JSON, and whether it is (nearly) expired."""
    token = json.loads(stored)
    expires = token.get("expires_at")
    return str(token["access_token"]), bool(expires and float(expires) - _EARLY < time.time())
