"""Access tokens (RFC 9068 JWTs) checked against the issuer's keys: a ``Principal`` or a refusal.

Verified with PyJWT. Only the configured asymmetric algorithms are accepted, whatever the
token's header says (``alg: none`` and an ``HS256`` token "signed" with the issuer's public
key never verify); ``exp``, ``iss``, ``aud`` and ``sub`` are required, ``exp`` and ``nbf``
checked with ``leeway``. ``sub`` becomes the subject, ``scope`` (space-separated, RFC 9068)
or ``scp`` (a list) the scopes; the other claims are kept on the principal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolpacks.core._principal import Principal
from toolpacks.mcp.http.auth._jwks import JwksCache, JwksUnavailable

if TYPE_CHECKING:
    from toolpacks.host.config._auth import AuthConfig

__all__ = ["InvalidToken", "TokenVerifier"]

MAX_TOKEN_BYTES = 8 * 1024
"""The longest ``Authorization`` header value accepted (8 KiB)."""


class InvalidToken(Exception):
    """A token that does not verify; the message is for the operator's log, not the client."""


class TokenVerifier:
    """Checks the access tokens of one issuer."""

    def __init__(self, config: AuthConfig, keys: JwksCache | None = None) -> None:
        self.config = config
        self.keys = keys if keys is not None else JwksCache(config)
        audience = config.audience
        self._audience = [audience] if isinstance(audience, str) else list(audience)

    async def verify(self, token: str) -> Principal:
        """The principal ``token`` stands for.

        Raises:
            InvalidToken: The token is malformed, signed by no key of the issuer, with an
                algorithm not allowed, expired, not yet valid, or for another issuer or
                audience; or the issuer's keys cannot be fetched (fail closed).
        """
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"malformed token ({exc})") from None
        alg = header.get("alg")
        if alg not in self.config.algorithms:
            raise InvalidToken(f"algorithm {alg!r} is not allowed ({self.config.algorithms})")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the kid in the token's header is not a string")
        try:
            key = await self.keys.key(kid)
        except JwksUnavailable as exc:
            raise InvalidToken(str(exc)) from None
        if key is None:
            raise InvalidToken(f"no key {kid!r} in the issuer's JWKS")
        if key.alg is not None and key.alg != alg:
            raise InvalidToken(f"key {kid!r} is for {key.alg}, the token says {alg}")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=[alg],
                audience=self._audience,
                issuer=self.config.issuer,
                leeway=self.config.leeway,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"{type(exc).__name__}: {exc}") from None
        return principal_of(claims)


def principal_of(claims: dict[str, Any]) -> Principal:
    """The principal of verified claims: ``sub``, and ``scope`` or ``scp``.

    Raises:
        InvalidToken: ``sub`` is not a non-empty string, or the scopes are neither a string
            nor a list of strings.
    """
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        raise InvalidToken("the token's sub is not a non-empty string")
    scopes: list[str] = []
    scope = claims.get("scope")
    if isinstance(scope, str):
        scopes = scope.split()
    elif scope is not None:
        raise InvalidToken("the token's scope is not a space-separated string")
    scp = claims.get("scp")
    if isinstance(scp, list) and all(isinstance(s, str) for s in scp):
        scopes.extend(scp)
    elif isinstance(scp, str):
        scopes.extend(scp.split())
    elif scp is not None:
        raise InvalidToken("the token's scp is not a list of strings")
    return Principal(subject, scopes=frozenset(scopes), claims=claims)
