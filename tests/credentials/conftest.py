"""Credential tests: every test gets its own state, cache and config directories."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Private state, cache and config directories; no key from the environment."""
    found = {k: tmp_path / k for k in ("state", "cache", "config")}
    monkeypatch.setenv("TOOLPACKS_STATE_DIR", str(found["state"]))
    monkeypatch.setenv("TOOLPACKS_CACHE_DIR", str(found["cache"]))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(found["config"]))
    monkeypatch.setenv("TOOLPACKS_TRUST_FILE", str(found["config"] / "trusted.json"))
    monkeypatch.delenv("TOOLPACKS_CREDENTIALS_KEY", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return found


@pytest.fixture
def plaintext_in() -> object:
    """``plaintext_in(dirs, secret)``: files under ``dirs`` whose bytes contain ``secret``."""
    return _plaintext_in


def _plaintext_in(directories: list[Path], secret: str) -> list[Path]:
    needle = secret.encode()
    return [
        p
        for d in directories
        if d.exists()
        for p in d.rglob("*")
        if p.is_file() and needle in p.read_bytes()
    ]


class LocalAuthServer:
    """A small real OAuth 2 authorization server on 127.0.0.1, for one confidential client.

    Authorization code with PKCE (S256 checked), refresh with rotation (a refresh token is
    used once), RFC 7009 revocation.
    """

    client_id = "toolpacks-test"
    client_secret = "s3cret-client-value"

    def __init__(self) -> None:
        import itertools
        import threading
        from http.server import ThreadingHTTPServer

        self.codes: dict[str, dict[str, str]] = {}
        self.refresh: dict[str, str] = {}  # refresh token -> subject of the grant
        self.access: dict[str, str] = {}
        self.seen_refresh: list[str] = []
        self.expires_in = 3600
        self._ids = itertools.count(1)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def config(self) -> dict[str, object]:
        """The ``[credentials.NAME]`` table of this server."""
        return {
            "kind": "oauth2",
            "authorize_url": f"{self.url}/authorize",
            "token_url": f"{self.url}/token",
            "revocation_url": f"{self.url}/revoke",
            "client_id": self.client_id,
            "client_secret": {"env": "HUB_CLIENT_SECRET"},
            "scopes": ["repo"],
        }

    def toml(self) -> str:
        """The same as TOML."""
        return (
            f'[credentials.hub]\nkind = "oauth2"\nauthorize_url = "{self.url}/authorize"\n'
            f'token_url = "{self.url}/token"\nrevocation_url = "{self.url}/revoke"\n'
            f'client_id = "{self.client_id}"\nclient_secret = {{ env = "HUB_CLIENT_SECRET" }}\n'
            'scopes = ["repo"]\n'
        )

    def _tokens(self) -> dict[str, object]:
        n = next(self._ids)
        access, refresh = f"at-{n}-{os.urandom(6).hex()}", f"rt-{n}-{os.urandom(6).hex()}"
        self.access[access] = "ok"
        self.refresh[refresh] = "ok"
        return {
            "access_token": access,
            "refresh_token": refresh,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
        }

    def _handler(self) -> type:
        import base64
        import hashlib
        import json
        from http.server import BaseHTTPRequestHandler
        from urllib.parse import parse_qs, urlencode, urlsplit

        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                """Quiet."""

            def _json(self, status: int, body: dict[str, object]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                q = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
                if not self.path.startswith("/authorize"):
                    self.send_error(404)
                    return
                ok = (
                    q.get("response_type") == "code"
                    and q.get("client_id") == server.client_id
                    and q.get("code_challenge_method") == "S256"
                    and q.get("code_challenge")
                )
                if not ok:
                    self._json(400, {"error": "invalid_request"})
                    return
                code = os.urandom(8).hex()
                server.codes[code] = q
                self.send_response(302)
                target = q["redirect_uri"] + "?" + urlencode({"code": code, "state": q["state"]})
                self.send_header("Location", target)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                auth = self.headers.get("Authorization", "")
                expected = base64.b64encode(
                    f"{server.client_id}:{server.client_secret}".encode()
                ).decode()
                if auth != f"Basic {expected}":
                    self._json(401, {"error": "invalid_client"})
                    return
                if self.path == "/revoke":
                    server.refresh.pop(form.get("token", ""), None)
                    server.access.pop(form.get("token", ""), None)
                    self._json(200, {})
                    return
                grant = form.get("grant_type")
                if grant == "authorization_code":
                    asked = server.codes.pop(form.get("code", ""), None)
                    verifier = form.get("code_verifier", "")
                    digest = hashlib.sha256(verifier.encode()).digest()
                    challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
                    if asked is None or asked["code_challenge"] != challenge:
                        self._json(400, {"error": "invalid_grant"})
                        return
                    if asked["redirect_uri"] != form.get("redirect_uri"):
                        self._json(400, {"error": "invalid_grant"})
                        return
                    self._json(200, server._tokens())
                    return
                if grant == "refresh_token":
                    token = form.get("refresh_token", "")
                    server.seen_refresh.append(token)
                    if server.refresh.pop(token, None) is None:  # rotated: used once
                        self._json(400, {"error": "invalid_grant"})
                        return
                    self._json(200, server._tokens())
                    return
                self._json(400, {"error": "unsupported_grant_type"})

        return Handler

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def auth_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalAuthServer]:
    """A local authorization server; its client secret in ``HUB_CLIENT_SECRET``."""
    monkeypatch.setenv("HUB_CLIENT_SECRET", LocalAuthServer.client_secret)
    server = LocalAuthServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def provider() -> Iterator[LocalAuthServer]:
    """A local authorization server shared by a module's tests (servers started once)."""
    server = LocalAuthServer()
    yield server
    server.close()
