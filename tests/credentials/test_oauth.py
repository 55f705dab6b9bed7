"""OAuth 2 credentials against a local authorization server: login, refresh, revocation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from toolpacks import Principal, ToolContext, tool
from toolpacks.host.credentials._store import SqliteCredentialStore
from toolpacks.testing import make_host

ALICE = Principal("alice")


@tool(credentials=["hub"])
def hub_token(ctx: ToolContext) -> str:
    """Return the access token the call received."""
    return ctx.credential("hub")


def login(server: Any, work: Path, subject: str) -> subprocess.CompletedProcess[str]:
    """``toolpacks credentials login hub``, the browser played by an HTTP client."""
    command = ["credentials", "login", "hub", "--subject", subject, "--no-browser"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolpacks", *command, "--timeout", "60"],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    proc.stdout.readline()  # "Open this URL ..."
    url = proc.stdout.readline().strip()
    assert url.startswith(f"{server.url}/authorize?")
    assert "code_challenge=" in url
    answer = httpx.get(url, follow_redirects=True, timeout=30)  # the user says yes
    assert answer.status_code == 200
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def expire(subject: str) -> None:
    """Make the stored access token look expired."""
    store = SqliteCredentialStore()
    token = json.loads(store.get("hub", subject) or "{}")
    token["expires_at"] = 1
    store.set("hub", subject, json.dumps(token))


def test_login_refresh_and_revocation(
    auth_server: Any, dirs: dict[str, Path], pack_of: Any, plaintext_in: Any
) -> None:
    """Code + PKCE through the CLI's loopback redirect, refresh with rotation, revocation.

    An expired access token is refreshed with the refresh token (rotated: the old one is
    used once); a revoked refresh asks the user to connect again.
    """
    work = dirs["config"].parent / "work"
    (work / "toolpacks.toml").write_text(auth_server.toml(), encoding="utf-8")
    done = login(auth_server, work, "alice")
    assert done.returncode == 0, done.stderr
    assert "connected hub for alice" in done.stdout

    config = {"credentials": {"hub": auth_server.config()}}
    toolset = make_host(pack_of(hub_token), names=["hub"], config=config).toolset()
    first = toolset.call_sync("hub_token", {}, ToolContext(principal=ALICE))
    assert first.value in auth_server.access
    old_refresh = json.loads(SqliteCredentialStore().get("hub", "alice") or "{}")["refresh_token"]

    expire("alice")
    second = toolset.call_sync("hub_token", {}, ToolContext(principal=ALICE))
    assert second.value in auth_server.access
    assert second.value != first.value
    assert auth_server.seen_refresh == [old_refresh]
    rotated = json.loads(SqliteCredentialStore().get("hub", "alice") or "{}")["refresh_token"]
    assert rotated != old_refresh
    assert rotated in auth_server.refresh

    for secret in (first.value, second.value, old_refresh, rotated):
        assert plaintext_in(list(dirs.values()), secret) == []

    auth_server.refresh.clear()  # the user revoked the grant at the provider
    expire("alice")
    third = toolset.call_sync("hub_token", {}, ToolContext(principal=ALICE))
    assert third.is_error
    assert "toolpacks credentials login hub --subject alice" in third.error.message
    assert SqliteCredentialStore().get("hub", "alice") is None


def test_delete_revokes_at_the_server(auth_server: Any, dirs: dict[str, Path]) -> None:
    """``credentials delete`` of an oauth2 credential revokes its refresh token."""
    work = dirs["config"].parent / "work"
    (work / "toolpacks.toml").write_text(auth_server.toml(), encoding="utf-8")
    assert login(auth_server, work, "bob").returncode == 0
    refresh = json.loads(SqliteCredentialStore().get("hub", "bob") or "{}")["refresh_token"]
    assert refresh in auth_server.refresh
    gone = subprocess.run(
        [sys.executable, "-m", "toolpacks", "credentials", "delete", "hub", "--subject", "bob"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert gone.returncode == 0, gone.stderr
    assert refresh not in auth_server.refresh
    assert SqliteCredentialStore().get("hub", "bob") is None
