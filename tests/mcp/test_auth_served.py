"""``toolpacks serve --http`` with ``[auth]``: real tokens from a local issuer, real servers.

The issuer (``auth_issuer.Issuer``) serves RFC 8414 metadata and a JWKS over HTTP with real
RSA and EC keys; the server is a real ``toolpacks serve --http`` subprocess (one worker and
two), reached with raw httpx for statuses and headers and with the official MCP client. One
server per configuration, shared by the tests of the module.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest

from .auth_issuer import AuthServer, Issuer, auth_config

OWN = "own-agent-static-token-0123456789"
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}


def call(name: str, arguments: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    body = {"name": name, "arguments": arguments or {}, **params}
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": body}


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    served = Issuer()
    yield served
    served.close()


@pytest.fixture(scope="module", params=[1, 2], ids=["one-worker", "two-workers"])
def server(
    request: pytest.FixtureRequest, issuer: Issuer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AuthServer]:
    workers = request.param
    directory = tmp_path_factory.mktemp(f"auth{workers}")
    args = ["--agent", "open", "--agent", "gated", "--agent", "own", "--workers", str(workers)]
    served = AuthServer(directory, auth_config(issuer), args, {"OWN_AGENT_TOKEN": OWN})
    yield served
    served.kill()


def post(
    server: AuthServer, agent: str, body: Any, token: str | None = None, **headers: str
) -> httpx.Response:
    sent = dict(HEADERS)
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    sent.update(headers)
    return httpx.post(server.url(agent), json=body, headers=sent, timeout=30)


def structured(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert not result.get("isError"), result
    return json.loads(result["content"][0]["text"])


def forge_none(issuer: Issuer) -> str:
    """An unsigned token (``alg: none``) with good claims."""
    good = issuer.token(scope="gated.use")
    claims = jwt.decode(good, options={"verify_signature": False})
    head = base64.urlsafe_b64encode(json.dumps({"alg": "none", "kid": "rsa-1"}).encode())
    body = base64.urlsafe_b64encode(json.dumps(claims).encode())
    return f"{head.decode().rstrip('=')}.{body.decode().rstrip('=')}."


def forge_hs256(issuer: Issuer) -> str:
    """An HS256 token keyed with the issuer's public key (the classic confusion attack)."""
    good = issuer.token(scope="gated.use")
    claims = jwt.decode(good, options={"verify_signature": False})
    import hashlib
    import hmac

    head = base64.urlsafe_b64encode(
        json.dumps({"alg": "HS256", "kid": "rsa-1", "typ": "JWT"}).encode()
    ).rstrip(b"=")
    body = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=")
    signing = head + b"." + body
    mac = hmac.new(issuer.public_pem("rsa-1"), signing, hashlib.sha256).digest()
    return (signing + b"." + base64.urlsafe_b64encode(mac).rstrip(b"=")).decode()


def bad_tokens(issuer: Issuer) -> dict[str, str]:
    """Every kind of bad token the issue names, by name."""
    return {
        "malformed": "not.a.jwt",
        "garbage": "abc",
        "expired": issuer.token(exp_in=-120),
        "not_yet_valid": issuer.token(nbf_in=120),
        "wrong_issuer": issuer.token(iss="https://evil.example"),
        "wrong_audience": issuer.token(aud="https://other.example/mcp"),
        "alg_none": forge_none(issuer),
        "hs256_public_key": forge_hs256(issuer),
        "unknown_kid": _unknown_kid(issuer),
        "oversized": issuer.token(padding="x" * 9000),
        "no_sub": issuer.token(sub=None),
        "another_agents_token": OWN,
    }


def _unknown_kid(issuer: Issuer) -> str:
    issuer.add_key("stray", "RS256")
    token = issuer.token(kid="stray")
    issuer.remove_key("stray")  # signed by a key the issuer never published
    return token


def test_every_bad_token_is_the_same_opaque_401(server: AuthServer, issuer: Issuer) -> None:
    bodies = set()
    for name, token in bad_tokens(issuer).items():
        response = post(server, "open", LIST, token)
        assert response.status_code == 401, (name, response.text)
        challenge = response.headers["www-authenticate"]
        expected = f"{server.base}/.well-known/oauth-protected-resource/agents/open/mcp"
        assert challenge == f'Bearer resource_metadata="{expected}", error="invalid_token"', name
        bodies.add(response.text)
    assert len(bodies) == 1  # no detail that tells one failure from another
    for token in bad_tokens(issuer).values():
        assert token not in server.stderr()  # never logged
    assert "ExpiredSignatureError" in server.stderr()  # the operator's log says why


def test_no_token_is_a_401_naming_the_metadata(server: AuthServer) -> None:
    response = post(server, "gated", LIST)
    assert response.status_code == 401
    expected = f"{server.base}/.well-known/oauth-protected-resource/agents/gated/mcp"
    assert response.headers["www-authenticate"] == f'Bearer resource_metadata="{expected}"'
    metadata = httpx.get(expected, timeout=30).json()
    assert metadata == {
        "resource": f"{server.base}/agents/gated/mcp",
        "authorization_servers": [metadata["authorization_servers"][0]],
        "scopes_supported": ["gated.use"],
        "bearer_methods_supported": ["header"],
    }


def test_duplicated_authorization_headers_are_refused(server: AuthServer, issuer: Issuer) -> None:
    good = f"Bearer {issuer.token()}"
    headers = [*HEADERS.items(), ("Authorization", good), ("Authorization", good)]
    response = httpx.post(server.url("open"), json=LIST, headers=headers, timeout=30)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


def test_rs256_and_es256_tokens_reach_the_tool_with_their_principal(
    server: AuthServer, issuer: Issuer
) -> None:
    for kid in ("rsa-1", "ec-1"):
        token = issuer.token(sub=f"user-{kid}", scope="a b", kid=kid)
        seen = structured(post(server, "open", call("whoami"), token))
        assert seen == {"subject": f"user-{kid}", "scopes": ["a", "b"], "caller": f"user-{kid}"}


def test_scp_list_claims_are_scopes(server: AuthServer, issuer: Issuer) -> None:
    token = issuer.token(sub="svc", scp=["x.read", "y.write"])
    seen = structured(post(server, "open", call("whoami"), token))
    assert seen["scopes"] == ["x.read", "y.write"]


def test_agent_scopes_are_a_403_step_up(server: AuthServer, issuer: Issuer) -> None:
    response = post(server, "gated", LIST, issuer.token(scope="other"))
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge
    assert 'scope="gated.use"' in challenge
    assert "resource_metadata=" in challenge
    allowed = post(server, "gated", call("whoami"), issuer.token(scope="gated.use"))
    assert structured(allowed)["scopes"] == ["gated.use"]


def test_a_per_agent_token_reaches_its_agent_only(server: AuthServer) -> None:
    seen = structured(post(server, "own", call("whoami"), OWN))
    assert seen == {"subject": "agent-token:own", "scopes": [], "caller": "agent-token:own"}
    for other in ("open", "gated"):
        assert post(server, other, LIST, OWN).status_code == 401


def test_healthz_is_open_and_metrics_needs_its_scope(server: AuthServer, issuer: Issuer) -> None:
    assert httpx.get(f"{server.base}/healthz", timeout=30).status_code == 200
    metrics = f"{server.base}/metrics"
    assert httpx.get(metrics, timeout=30).status_code == 401
    bearer = {"Authorization": f"Bearer {issuer.token(scope='gated.use')}"}
    refused = httpx.get(metrics, headers=bearer, timeout=30)
    assert refused.status_code == 403
    assert 'scope="metrics.read"' in refused.headers["www-authenticate"]
    bearer = {"Authorization": f"Bearer {issuer.token(scope='metrics.read')}"}
    assert httpx.get(metrics, headers=bearer, timeout=30).status_code == 200
    assert (
        httpx.get(metrics, headers={"Authorization": f"Bearer {OWN}"}, timeout=30).status_code
        == 401
    )


def sdk_road(body: dict[str, Any]) -> dict[str, Any]:
    """The same request with a parameter the direct route leaves to the SDK."""
    if "params" not in body:
        return {**body, "params": {"_meta": {"road": "sdk"}}}
    return {**body, "params": {**body["params"], "road": "sdk"}}


def test_the_direct_route_and_the_sdk_road_check_the_same(
    server: AuthServer, issuer: Issuer
) -> None:
    corpus: list[tuple[str, str, str | None, dict[str, Any]]] = [
        (f"bad:{name}", "open", token, call("whoami")) for name, token in bad_tokens(issuer).items()
    ]
    corpus += [
        ("none", "gated", None, call("whoami")),
        ("basic", "open", None, call("whoami")),
        ("step_up", "gated", issuer.token(scope="other"), call("whoami")),
        ("allowed", "gated", issuer.token(sub="carol", scope="gated.use"), call("whoami")),
        ("es256", "open", issuer.token(sub="dave", kid="ec-1"), call("whoami")),
        ("own", "own", OWN, call("whoami")),
        ("list", "gated", issuer.token(scope="gated.use"), LIST),
    ]
    for name, agent, token, body in corpus:
        extra = {"Authorization": "Basic dXNlcjpwYXNz"} if name == "basic" else {}
        direct = post(server, agent, body, token, **extra)
        sdk = post(server, agent, sdk_road(body), token, **extra)
        assert direct.status_code == sdk.status_code, name
        assert direct.headers.get("www-authenticate") == sdk.headers.get("www-authenticate"), name
        if direct.status_code != 200:
            assert direct.json() == sdk.json(), name
            continue
        assert direct.text != sdk.text, name  # two serializers: the roads really differ
        left, right = direct.json()["result"], sdk.json()["result"]
        if "tools" in left:
            assert [t["name"] for t in left["tools"]] == [t["name"] for t in right["tools"]]
        else:
            assert left["content"] == right["content"], name
            assert left["isError"] is False, name
