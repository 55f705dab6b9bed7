"""The issuer's signing keys: fetched over HTTP, cached, refetched when a new ``kid`` appears.

Keys are fetched from ``jwks_uri`` (or the one the issuer's RFC 8414 / OpenID metadata
names), kept for ``jwks_cache_seconds``, and fetched again early when a token names a ``kid``
the cache does not hold, at most once per ``jwks_min_refetch_seconds`` (so tokens with made-up
key ids cannot make the server hammer the issuer). A JWKS that cannot be fetched fails closed:
no key, every token refused, and a log line for the operator; the next fetch allowed by the
rate limit recovers. Each worker process has its own cache.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolpacks.host.config._auth import AuthConfig

__all__ = ["JwksCache", "JwksUnavailable", "SigningKey", "discovery_urls"]

logger = logging.getLogger("toolpacks.mcp.auth")

FETCH_TIMEOUT = 5.0
"""Seconds allowed for fetching metadata or keys."""
MAX_DOCUMENT_BYTES = 1024 * 1024
"""The largest metadata or JWKS document read (1 MiB)."""


@dataclass(frozen=True, slots=True)
class SigningKey:
    """One key of the issuer's JWKS."""

    key: Any
    """The public key, as PyJWT uses it."""
    alg: str | None
    """The algorithm the JWKS binds it to (its ``alg``), if it names one."""


class JwksUnavailable(Exception):
    """The issuer's keys could not be fetched (the token is refused: fail closed)."""


def discovery_urls(issuer: str) -> list[str]:
    """Where the issuer's metadata may be: RFC 8414 first, then OpenID Connect Discovery."""
    from urllib.parse import urlsplit

    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    urls = [f"{origin}/.well-known/oauth-authorization-server{path}"]
    urls.append(f"{origin}{path}/.well-known/openid-configuration")
    if path:
        urls.append(f"{origin}/.well-known/openid-configuration{path}")
    return urls


class JwksCache:
    """The keys of one issuer, by ``kid``."""

    def __init__(self, config: AuthConfig, *, clock: Any = time.monotonic) -> None:
        self.config = config
        self._clock = clock
        self._keys: dict[str, SigningKey] = {}
        self._jwks_uri = config.jwks_uri
        self._fetched_at: float | None = None
        """When keys were last fetched successfully."""
        self._tried_at: float | None = None
        """When a fetch was last attempted (success or failure)."""
        self._lock = asyncio.Lock()
        self._attempts = 0
        self.fetches = 0
        """How many times the JWKS was fetched (for tests and operators)."""
        self.generation = 0
        """Changes whenever the keys held change (a fetch, or keys dropped as expired)."""

    async def key(self, kid: str | None) -> SigningKey | None:
        """The key named ``kid`` (None: the only key), or None when the issuer has none such.

        Raises:
            JwksUnavailable: No keys are held and they cannot be fetched now.
        """
        now = self._clock()
        found = self._lookup(kid)
        if found is not None and not self._stale(now):
            return found
        if self._stale(now) or self._may_refetch(now):
            await self._refresh(self._attempts)
        if self._fetched_at is None:
            raise JwksUnavailable("the issuer's keys could not be fetched")
        return self._lookup(kid)

    def fresh(self) -> bool:
        """Whether keys are held and younger than ``jwks_cache_seconds``."""
        return not self._stale(self._clock())

    def _stale(self, now: float) -> bool:
        fetched = self._fetched_at
        return fetched is None or now - fetched >= self.config.jwks_cache_seconds

    def _lookup(self, kid: str | None) -> SigningKey | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    def _may_refetch(self, now: float) -> bool:
        tried = self._tried_at
        return tried is None or now - tried >= self.config.jwks_min_refetch_seconds

    async def _refresh(self, seen: int) -> None:
        """Fetch the keys once (requests waiting meanwhile use that fetch's outcome)."""
        async with self._lock:
            if self._attempts != seen:
                return  # another request fetched while this one waited
            now = self._clock()
            if not self._may_refetch(now):
                return
            self._attempts += 1
            self._tried_at = now
            try:
                keys = await self._fetch()
            except Exception as exc:
                logger.error(
                    "[auth] could not fetch the issuer's keys (%s: %s); tokens signed with "
                    "keys not held are refused until they can be fetched",
                    type(exc).__name__,
                    exc,
                )
                if self._stale(now):
                    self._keys = {}
                    self._fetched_at = None
                    self.generation += 1
                return
            self._keys = keys
            self._fetched_at = self._clock()
            self.fetches += 1
            self.generation += 1

    async def _fetch(self) -> dict[str, SigningKey]:
        import httpx

        async with httpx.AsyncClient(timeout=FETCH_TIMEOUT, follow_redirects=False) as client:
            if self._jwks_uri is None:
                self._jwks_uri = await self._discover(client)
            document = await _get_json(client, self._jwks_uri)
        return _parse_jwks(document, self.config.algorithms)

    async def _discover(self, client: Any) -> str:
        issuer = self.config.issuer
        for url in discovery_urls(issuer):
            try:
                metadata = await _get_json(client, url)
            except Exception:
                continue
            if metadata.get("issuer") not in (issuer, issuer.rstrip("/")):
                raise ValueError(f"{url} names issuer {metadata.get('issuer')!r}, not {issuer!r}")
            jwks_uri = metadata.get("jwks_uri")
            if not isinstance(jwks_uri, str) or not jwks_uri.startswith(("https://", "http://")):
                raise ValueError(f"{url} names no jwks_uri")
            return jwks_uri
        raise ValueError(
            f"no authorization server metadata found for issuer {issuer} (tried "
            f"{', '.join(discovery_urls(issuer))}); set [auth] jwks_uri"
        )


async def _get_json(client: Any, url: str) -> dict[str, Any]:
    import json

    response = await client.get(url, headers={"Accept": "application/json"})
    if response.status_code != 200:
        raise ValueError(f"{url} answered HTTP {response.status_code}")
    if len(response.content) > MAX_DOCUMENT_BYTES:
        raise ValueError(f"{url} sent more than {MAX_DOCUMENT_BYTES} bytes")
    value = json.loads(response.content)
    if not isinstance(value, dict):
        raise ValueError(f"{url} did not send a JSON object")
    return value


def _parse_jwks(document: dict[str, Any], algorithms: list[str]) -> dict[str, SigningKey]:
    """The usable signing keys of a JWKS document, by ``kid`` (keys without one get ``""``)."""
    from jwt import PyJWK

    raw = document.get("keys")
    if not isinstance(raw, list):
        raise ValueError("the JWKS has no 'keys' list")
    keys: dict[str, SigningKey] = {}
    for entry in raw:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        if entry.get("kty") == "oct":  # a shared secret: never a key for access tokens
            continue
        alg = entry.get("alg")
        if alg is not None and alg not in algorithms:
            continue
        try:
            key = PyJWK(entry)
        except Exception:
            continue
        keys[str(entry.get("kid", ""))] = SigningKey(key.key, alg)
    return keys
