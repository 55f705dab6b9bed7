"""What an ``[auth]`` table may say: ``serve --http`` as an OAuth 2.1 resource server.

Access tokens are JWTs (RFC 9068) signed by ``issuer`` with an asymmetric key published as a
JWKS (``jwks_uri``, else discovered from the issuer's RFC 8414 or OpenID metadata). The
checks themselves live in ``toolpacks.mcp.http.auth``; this is only the schema.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["ASYMMETRIC_ALGORITHMS", "AuthConfig"]

ASYMMETRIC_ALGORITHMS = (
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
)  # fmt: skip
"""The signature algorithms a token may use: asymmetric only (never ``HS*`` nor ``none``)."""


class AuthConfig(BaseModel):
    """``[auth]``: who may call the HTTP server, from the issuer's access tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    issuer: str
    """The authorization server's issuer URL (the tokens' ``iss``; required)."""
    audience: str | list[str]
    """The ``aud`` a token must carry (this server's resource URL, RFC 8707; required)."""
    jwks_uri: str | None = None
    """Where the issuer's keys are; unset: discovered from the issuer's
    ``/.well-known/oauth-authorization-server`` or ``/.well-known/openid-configuration``."""
    leeway: float = Field(default=30.0, ge=0, le=300)
    """Seconds of clock skew allowed on ``exp`` and ``nbf``."""
    algorithms: list[str] = Field(default_factory=lambda: ["RS256", "ES256", "EdDSA"])
    """Signature algorithms accepted (asymmetric only: ``HS*`` and ``none`` are refused)."""
    metrics_scope: str | None = None
    """The scope a token needs to read ``/metrics`` (unset: only the ``--token-env`` token)."""
    scopes_supported: list[str] = Field(default_factory=list)
    """Scopes named in the protected resource metadata (RFC 9728) besides the agents'."""
    resource_url: str | None = None
    """This server's public base URL (``https://tools.example.com``) for the metadata and
    ``WWW-Authenticate``; unset: taken from each request's scheme and ``Host``."""
    jwks_cache_seconds: float = Field(default=300.0, ge=0)
    """How long fetched keys are used before they are fetched again."""
    jwks_min_refetch_seconds: float = Field(default=10.0, ge=0)
    """The shortest time between two fetches (an unknown ``kid`` refetches at most this often)."""
    mode: Literal["jwt"] = "jwt"
    """How tokens are checked: ``jwt`` (signed access tokens, verified locally)."""

    @model_validator(mode="before")
    @classmethod
    def _required(cls, value: Any) -> Any:
        if isinstance(value, dict):
            if not value.get("issuer"):
                raise ValueError(
                    '[auth] needs issuer: add issuer = "https://your-issuer.example" (the '
                    "authorization server whose tokens this server accepts)"
                )
            if not value.get("audience"):
                raise ValueError(
                    '[auth] needs audience: add audience = "https://this-server.example/mcp" '
                    "(the aud your issuer puts in tokens meant for this server)"
                )
        return value

    @field_validator("issuer", "jwks_uri", "resource_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("https://", "http://")):
            raise ValueError(f"{value!r} is not an http(s) URL")
        return value

    @field_validator("algorithms")
    @classmethod
    def _asymmetric(cls, value: list[str]) -> list[str]:
        bad = [a for a in value if a not in ASYMMETRIC_ALGORITHMS]
        if bad:
            raise ValueError(
                f"[auth] algorithms {bad} are not allowed: only asymmetric signatures are "
                f"accepted ({', '.join(ASYMMETRIC_ALGORITHMS)}); HS* and none never are"
            )
        if not value:
            raise ValueError("[auth] algorithms is empty: name at least one, e.g. ['RS256']")
        return value
