"""Access tokens (RFC 9068 JWTs) checked against the issuer's keys: a ``Principal`` or a refusal.

Verified with PyJWT. Only the configured asymmetric algorithms are accepted, whatever the
token's header says (``alg: none`` and an ``HS256`` token "signed" with the issuer's public
key never verify); ``exp``, ``iss``, ``aud`` and ``sub`` are required, ``exp`` and ``nbf``
checked with ``leeway``. ``sub`` becomes the subject, ``scope`` (space-separated, RFC 9068)
or ``scp`` (a list) the scopes; the other claims are kept on the principal.

A client sends the same access token with every request, so tokens that verified are
remembered (the most recent 1024, by their exact text): a repeated token costs a lookup and
the ``exp``/``nbf`` checks instead of a signature check. The memory is dropped whenever the
keys are fetched again, and not used once they are older than ``jwks_cache_seconds``, so a
removed key stops working for remembered tokens exactly as for new ones.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from toolpacks.core._principal import Principal
from toolpacks.mcp.http.auth._jwks import JwksCache, JwksUnavailable

if TYPE_CHECKING:
    from toolpacks.host.config._auth import AuthConfig

__all__ = ["InvalidToken", "TokenVerifier"]

MAX_TOKEN_BYTES = 8 * 1024
"""The longest ``Authorization`` header value accepted (8 KiB)."""
REMEMBERED = 1024
"""Verified tokens remembered per process."""


class InvalidToken(Exception):
    """A token that does not verify; the message is for the operator's log, not the client."""


class TokenVerifier:
    """Checks the access tokens of one issuer."""

    def __init__(self, config: AuthConfig, keys: JwksCache | None = None) -> None:
        self.config = config
        self.keys = keys if keys is not None else JwksCache(config)
        audience = config.audience
        self._audience = [audience] if isinstance(audience, str) else list(audience)
        self._verified: OrderedDict[str, tuple[Principal, float, float, int]] = OrderedDict()
        """Token text -> (principal, exp, nbf, key generation) of tokens that verified."""

    async def verify(self, token: str) -> Principal:
        """The principal ``token`` stands for.

        Raises:
            InvalidToken: The token is malformed, signed by no key of the issuer, with an
                algorithm not allowed, expired, not yet valid, or for another issuer or
                audience; or the issuer's keys cannot be fetched (fail closed).
        """
        remembered = self._remembered(token)
        if remembered is not None:
            return remembered
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
        principal = principal_of(claims)
        self._remember(token, principal, claims)
        return principal

    def _remembered(self, token: str) -> Principal | None:
        """The principal of a token that verified with the keys held now, if still in time."""
        entry = self._verified.get(token)
        if entry is None:
            return None
        principal, expires, not_before, generation = entry
        now = time.time()
        leeway = self.config.leeway
        if generation != self.keys.generation or not self.keys.fresh():
            return None  # the keys changed or must be fetched: check it again
        if now > expires + leeway or now < not_before - leeway:
            return None  # expired (or not yet valid): the full check says so
        self._verified.move_to_end(token)
        return principal

    def _remember(self, token: str, principal: Principal, claims: dict[str, Any]) -> None:
        try:
            expires = float(claims["exp"])
            not_before = float(claims.get("nbf", float("-inf")))
        except (TypeError, ValueError):
            return
        self._verified[token] = (principal, expires, not_before, self.keys.generation)
        if len(self._verified) > REMEMBERED:
            self._verified.popitem(last=False)


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
