"""A local OAuth authorization server for the resource-server tests: real keys, real HTTP.

``Issuer`` serves RFC 8414 metadata and a JWKS from a ``ThreadingHTTPServer`` on 127.0.0.1
(in a thread), holds real RSA (RS256) and EC (ES256) keys from ``cryptography``, and signs
access tokens with PyJWT. Keys can be added and removed (rotation) and the JWKS taken down
(an unreachable issuer). ``AuthServer`` runs ``toolpacks serve --http`` with a configuration
of the test's own, and a pack whose ``whoami`` tool reports the principal it sees.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from .conftest import HttpServer

AUDIENCE = "https://tools.test/mcp"

WHOAMI_PACK = '''
"""Tools for the auth tests: one reports the principal it was called for."""

from toolpacks import ToolContext, hookimpl, tool


@tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def whoami(ctx: ToolContext) -> dict:
    """The caller's subject and scopes, as the tool sees them."""
    p = ctx.principal
    return {
        "subject": None if p is None else p.subject,
        "scopes": [] if p is None else sorted(p.scopes),
        "caller": ctx.caller_identity,
    }


@hookimpl
def register_tools(register):
    register(add, pack="who")
    register(whoami, pack="who")
'''


class Issuer:
    """An authorization server on 127.0.0.1 serving its metadata and keys."""

    def __init__(self) -> None:
        self.keys: dict[str, tuple[Any, str]] = {}
        self.down = False
        self.jwks_fetches = 0
        self.codes: dict[str, tuple[str, str]] = {}
        """Authorization codes issued: code -> (PKCE challenge, scope)."""
        self.token_requests: list[dict[str, str]] = []
        self.add_key("rsa-1", "RS256")
        self.add_key("ec-1", "ES256")
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if issuer.down:
                    self._send(503, {"error": "down"})
                elif self.path == "/.well-known/oauth-authorization-server":
                    self._send(200, issuer.metadata())
                elif self.path == "/jwks":
                    issuer.jwks_fetches += 1
                    self._send(200, issuer.jwks())
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length).decode()
                if self.path == "/register":
                    sent = json.loads(raw)
                    self._send(201, {**sent, "client_id": "registered-client"})
                elif self.path == "/token":
                    form = {k: v[0] for k, v in parse_qs(raw).items()}
                    issuer.token_requests.append(form)
                    self._send(*issuer.exchange(form))
                else:
                    self._send(404, {"error": "not found"})

            def _send(self, status: int, body: Any) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add_key(self, kid: str, alg: str) -> None:
        if alg.startswith("RS"):
            private: Any = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        else:
            private = ec.generate_private_key(ec.SECP256R1())
        self.keys[kid] = (private, alg)

    def remove_key(self, kid: str) -> None:
        del self.keys[kid]

    def public_pem(self, kid: str) -> bytes:
        from cryptography.hazmat.primitives import serialization

        return (
            self.keys[kid][0]
            .public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "jwks_uri": f"{self.url}/jwks",
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code"],
            "code_challenge_methods_supported": ["S256"],
            "registration_endpoint": f"{self.url}/register",
            "token_endpoint_auth_methods_supported": ["none"],
        }

    def authorize(self, url: str) -> tuple[str, str | None]:
        """What a user's approval at ``url`` (the authorization endpoint) gives: code, state."""
        query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        code = f"code-{len(self.codes)}"
        self.codes[code] = (query["code_challenge"], query.get("scope", ""))
        return code, query.get("state")

    def exchange(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """The token endpoint: an authorization code and its PKCE verifier for a token."""
        import base64
        import hashlib

        held = self.codes.pop(form.get("code", ""), None)
        verifier = form.get("code_verifier", "").encode()
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
        if held is None or held[0] != challenge.decode():
            return 400, {"error": "invalid_grant"}
        token = self.token(sub="oauth-user", scope=held[1] or "gated.use")
        return 200, {"access_token": token, "token_type": "Bearer", "expires_in": 300}

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid, (private, alg) in self.keys.items():
            algorithm = jwt.get_algorithm_by_name(alg)
            jwk = json.loads(algorithm.to_jwk(private.public_key()))
            keys.append({**jwk, "kid": kid, "alg": alg, "use": "sig"})
        return {"keys": keys}

    def token(
        self,
        sub: str = "alice",
        scope: str | None = None,
        *,
        kid: str = "rsa-1",
        aud: str | list[str] = AUDIENCE,
        iss: str | None = None,
        exp_in: float = 300,
        nbf_in: float | None = None,
        **claims: Any,
    ) -> str:
        """An access token signed with key ``kid`` (claims set to None are left out)."""
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": iss if iss is not None else self.url,
            "sub": sub,
            "aud": aud,
            "iat": now,
            "exp": now + int(exp_in),
            "client_id": "test-client",
            **claims,
        }
        if scope is not None:
            body["scope"] = scope
        if nbf_in is not None:
            body["nbf"] = now + int(nbf_in)
        body = {k: v for k, v in body.items() if v is not None}
        private, alg = self.keys[kid]
        return jwt.encode(body, private, algorithm=alg, headers={"kid": kid, "typ": "at+jwt"})


def auth_config(issuer: Issuer, extra_auth: str = "", agents: str = "") -> str:
    """A configuration with ``[auth]`` for ``issuer`` and the agents of the auth tests."""
    return (
        textwrap.dedent(
            f"""
        [auth]
        issuer = "{issuer.url}"
        audience = "{AUDIENCE}"
        leeway = 5
        jwks_min_refetch_seconds = 0
        metrics_scope = "metrics.read"
        """
        )
        + extra_auth
        + (agents or DEFAULT_AGENTS)
    )


DEFAULT_AGENTS = """
[agents.open]
packs = ["who"]

[agents.gated]
packs = ["who"]
scopes = ["gated.use"]

[agents.own]
packs = ["who"]
token = { env = "OWN_AGENT_TOKEN" }
"""


class AuthServer(HttpServer):
    """``toolpacks serve --http`` of the ``who`` pack with the test's configuration."""

    def __init__(self, directory: Path, config: str, args: list[str], env: dict[str, str]) -> None:
        (directory / "who_pack.py").write_text(textwrap.dedent(WHOAMI_PACK))
        dist = directory / "toolpacks_who-0.1.dist-info"
        dist.mkdir(exist_ok=True)
        (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-who\nVersion: 0.1\n")
        (dist / "entry_points.txt").write_text("[toolpacks]\nwho = who_pack\n")
        path = directory / "toolpacks.toml"
        path.write_text(config)
        environ = {**os.environ, "PYTHONPATH": str(directory), **env}
        command = [sys.executable, "-m", "toolpacks", "serve", "--config", str(path)]
        self.proc = subprocess.Popen(
            [*command, "--http", "127.0.0.1:0", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=environ,
            cwd=directory,
        )
        self.directory = directory
        self.lines: list[str] = []
        self._base: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.base = self._wait_announced()
