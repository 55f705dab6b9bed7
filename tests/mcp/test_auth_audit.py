"""Requests refused before a toolset sees them leave one ``toolpacks.audit`` record each.

``Authenticator.identify`` on ASGI scopes as the app passes them: no token, a bad token, a
token for another agent and a token without the agent's scopes each log one record (JSON
message and the ``audit`` dict) naming agent, reason and outcome, never the token.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator

import pytest

from toolpacks.host.config._auth import AuthConfig
from toolpacks.mcp.http.auth._gate import Authenticator
from toolpacks.mcp.http.auth._static import StaticTokens

from .auth_issuer import AUDIENCE, Issuer

OWN = "a-static-token-of-agent-b-000000000"


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    served = Issuer()
    yield served
    served.close()


def scope(token: str | None) -> dict[str, object]:
    headers = [(b"host", b"127.0.0.1:8000")]
    if token is not None:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    return {"headers": headers, "path": "/agents/a/mcp", "scheme": "http"}


def test_each_refusal_is_one_audit_record_without_the_token(
    issuer: Issuer, caplog: pytest.LogCaptureFixture
) -> None:
    config = AuthConfig.model_validate({"issuer": issuer.url, "audience": AUDIENCE})
    auth = Authenticator(config, StaticTokens(None, {"b": OWN}), {"a": ["a.use"], "b": []})
    cases = {
        "no_token": (None, 401, None, "unauthenticated"),
        "invalid_token": (issuer.token(exp_in=-600), 401, None, "unauthenticated"),
        "another": (OWN, 401, None, "unauthenticated"),
        "agent_scope": (issuer.token(sub="zoe", scope="x"), 403, "zoe", "agent_scope"),
    }
    for name, (token, status, subject, reason) in cases.items():
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="toolpacks.audit"):
            _principal, refusal = asyncio.run(auth.identify("a", scope(token)))
        assert refusal is not None, name
        assert refusal.status == status, name
        records = [r for r in caplog.records if r.name == "toolpacks.audit"]
        assert len(records) == 1, name
        audit = records[0].audit  # type: ignore[attr-defined]
        assert json.loads(records[0].getMessage()) == audit
        assert audit["agent"] == "a"
        assert audit["subject"] == subject
        assert audit["decision"] == "refused"
        assert audit["road"] == f"http_{status}"
        assert audit["reason"] == reason
        if token is not None:
            assert token not in records[0].getMessage()
            assert all(token not in r.getMessage() for r in caplog.records)


def test_an_admitted_request_leaves_no_refusal_record(
    issuer: Issuer, caplog: pytest.LogCaptureFixture
) -> None:
    config = AuthConfig.model_validate({"issuer": issuer.url, "audience": AUDIENCE})
    auth = Authenticator(config, StaticTokens(None, {}), {"a": ["a.use"]})
    with caplog.at_level(logging.INFO, logger="toolpacks.audit"):
        principal, refusal = asyncio.run(auth.identify("a", scope(issuer.token(scope="a.use"))))
    assert refusal is None
    assert principal is not None
    assert principal.subject == "alice"
    assert not [r for r in caplog.records if r.name == "toolpacks.audit"]
