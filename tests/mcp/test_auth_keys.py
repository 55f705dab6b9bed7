"""The issuer's keys: discovery, caching, rotation, a rate-limited refetch, failing closed.

``TokenVerifier`` against a real local issuer (``auth_issuer.Issuer``: RFC 8414 metadata and
a JWKS over HTTP), with a clock the test moves; and key rotation against a real
``toolpacks serve --http`` whose cache keeps keys for no time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from toolpacks.exceptions import ConfigError
from toolpacks.host.config._auth import AuthConfig
from toolpacks.mcp.http.auth._jwks import JwksCache, discovery_urls
from toolpacks.mcp.http.auth._verify import InvalidToken, TokenVerifier

from .auth_issuer import AUDIENCE, AuthServer, Issuer, auth_config


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    served = Issuer()
    yield served
    served.close()


def verifier(issuer: Issuer, clock: Clock, **settings: object) -> TokenVerifier:
    config = AuthConfig.model_validate(
        {"issuer": issuer.url, "audience": AUDIENCE, "leeway": 5, **settings}
    )
    return TokenVerifier(config, JwksCache(config, clock=clock))


def check(verify: TokenVerifier, token: str) -> str:
    return asyncio.run(verify.verify(token)).subject


def test_keys_are_discovered_from_the_issuer_metadata_and_cached(issuer: Issuer) -> None:
    clock = Clock()
    verify = verifier(issuer, clock)
    for _ in range(3):
        assert check(verify, issuer.token(sub="u")) == "u"
        assert check(verify, issuer.token(sub="e", kid="ec-1")) == "e"
    assert issuer.jwks_fetches == 1


def test_a_new_kid_is_fetched_at_most_once_per_interval(issuer: Issuer) -> None:
    clock = Clock()
    verify = verifier(issuer, clock, jwks_min_refetch_seconds=10)
    check(verify, issuer.token())
    issuer.add_key("rsa-2", "RS256")
    clock.now += 11  # a rotation after the interval: the unknown kid is fetched and accepted
    assert check(verify, issuer.token(sub="rotated", kid="rsa-2")) == "rotated"
    assert issuer.jwks_fetches == 2
    for number in range(5):  # made-up kids within the interval: no fetch at all
        with pytest.raises(InvalidToken, match="no key"):
            check(verify, _stray(issuer, number))
    assert issuer.jwks_fetches == 2
    clock.now += 11
    with pytest.raises(InvalidToken, match="no key"):
        check(verify, _stray(issuer, 99))
    assert issuer.jwks_fetches == 3


def _stray(issuer: Issuer, number: int) -> str:
    kid = f"stray-{number}"
    issuer.add_key(kid, "RS256")
    token = issuer.token(kid=kid)
    issuer.remove_key(kid)
    return token


def test_a_removed_key_is_refused_once_the_cache_expires(issuer: Issuer) -> None:
    clock = Clock()
    verify = verifier(issuer, clock, jwks_cache_seconds=60)
    old = issuer.token(sub="old")
    assert check(verify, old) == "old"
    issuer.add_key("rsa-2", "RS256")
    issuer.remove_key("rsa-1")
    clock.now += 61
    with pytest.raises(InvalidToken, match="no key 'rsa-1'"):
        check(verify, old)
    assert check(verify, issuer.token(sub="new", kid="rsa-2")) == "new"


def test_an_unreachable_issuer_fails_closed_and_recovers(issuer: Issuer) -> None:
    clock = Clock()
    verify = verifier(issuer, clock, jwks_cache_seconds=60, jwks_min_refetch_seconds=5)
    issuer.down = True
    with pytest.raises(InvalidToken, match="could not be fetched"):
        check(verify, issuer.token())
    issuer.down = False
    with pytest.raises(InvalidToken, match="could not be fetched"):
        check(verify, issuer.token())  # within the interval: not asked again
    clock.now += 6
    assert check(verify, issuer.token(sub="back")) == "back"
    issuer.down = True  # keys held and fresh: an outage of the issuer changes nothing
    assert check(verify, issuer.token(sub="still")) == "still"
    clock.now += 61  # keys expired and the issuer down: closed again
    with pytest.raises(InvalidToken, match="could not be fetched"):
        check(verify, issuer.token())


def test_hs_and_none_algorithms_cannot_be_configured() -> None:
    for bad in (["HS256"], ["none"], ["RS256", "HS512"]):
        with pytest.raises(ValueError, match="only asymmetric"):
            AuthConfig.model_validate({"issuer": "https://i", "audience": "a", "algorithms": bad})


def test_auth_without_issuer_or_audience_says_what_to_add(tmp_path: Path) -> None:
    from toolpacks import Host

    with pytest.raises(ConfigError, match="needs issuer: add issuer ="):
        Host({"auth": {"audience": "https://x/mcp"}})
    with pytest.raises(ConfigError, match="needs audience: add audience ="):
        Host({"auth": {"issuer": "https://issuer.example"}})


def test_an_agent_with_scopes_needs_auth_or_its_own_token_over_http() -> None:
    from toolpacks import Host
    from toolpacks.mcp import http_app

    with Host({"agents": {"a": {"packs": [], "scopes": ["x"]}}}) as host:
        with pytest.raises(ConfigError, match=r"add an \[auth\] table"):
            http_app(host, ["a"])
        assert host.toolset("a").names() == []  # in-process, nothing is asked for


def test_discovery_tries_rfc_8414_then_openid() -> None:
    assert discovery_urls("https://id.example/tenant") == [
        "https://id.example/.well-known/oauth-authorization-server/tenant",
        "https://id.example/tenant/.well-known/openid-configuration",
        "https://id.example/.well-known/openid-configuration/tenant",
    ]


def test_rotation_against_a_served_agent(issuer: Issuer, tmp_path: Path) -> None:
    config = auth_config(issuer).replace("leeway = 5", "leeway = 5\njwks_cache_seconds = 0")
    server = AuthServer(tmp_path, config, ["--agent", "open"], {"OWN_AGENT_TOKEN": "x" * 32})
    try:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}

        def status(token: str) -> int:
            headers = {
                "Accept": "application/json",
                "Content-Type": "application/json",
                "Authorization": f"Bearer {token}",
            }
            return httpx.post(
                server.url("open"), json=body, headers=headers, timeout=30
            ).status_code

        old = issuer.token()
        assert status(old) == 200
        issuer.add_key("rsa-2", "RS256")
        assert status(issuer.token(kid="rsa-2")) == 200  # a new kid appears: accepted
        issuer.remove_key("rsa-1")
        assert status(old) == 401  # the old key is gone: refused
    finally:
        server.kill()


def test_a_repeated_token_is_remembered_until_it_expires_or_the_keys_change(
    issuer: Issuer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jwt

    from toolpacks.mcp.http.auth import _verify

    clock = Clock()
    verify = verifier(issuer, clock, leeway=0, jwks_cache_seconds=60)
    decoded: list[str] = []
    real = jwt.decode

    def counting(token: str, *args: object, **kwargs: object) -> object:
        decoded.append(token)
        return real(token, *args, **kwargs)

    monkeypatch.setattr(jwt, "decode", counting)
    token = issuer.token(sub="same", exp_in=100)
    for _ in range(3):
        assert check(verify, token) == "same"
    assert len(decoded) == 1  # one signature check for three requests
    later = _verify.time.time() + 101
    monkeypatch.setattr(_verify.time, "time", lambda: later)
    assert verify._remembered(token) is None  # expired: the full check decides again
    monkeypatch.undo()
    monkeypatch.setattr(jwt, "decode", counting)
    clock.now += 61  # the keys must be fetched again: remembered tokens are checked again
    assert check(verify, token) == "same"
    assert len(decoded) == 2
