"""``toolpacks show`` and ``doctor`` never print a secret, in a real CLI process.

Secrets are hidden by key (``passphrase``, ``auth``, ``session_cookie``, ``token``,
``api_key``, ``password`` and everything inside a table under such a key), by value (every
value read from the environment through ``{ env = ... }``, token-like strings, URL
passwords, secret MCP arguments and environment), in stdout and stderr (the warnings logged
for packs that fail to load quote their error), in human and ``--json`` output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolpacks.core._secrets import is_secret_key

PACK = """
    import base64
    from urllib.parse import quote
    from toolpacks import hookimpl, tool

    @hookimpl
    def register_tools(register):
        config = register.config
        if config.get("fail"):
            dsn = config["dsn"]
            raise RuntimeError(
                f"cannot connect to {dsn} (quoted {quote(dsn, safe='')}, "
                f"base64 {base64.b64encode(dsn.encode()).decode()})"
            )

        def ping() -> str:
            return "pong"

        ping.__doc__ = f"Ping the service at {config.get('endpoint')}."
        register(tool(ping))
"""
"""A pack whose tool description quotes a setting, or that fails quoting its ``dsn``."""

ENVIRONMENT = {
    "TP_API_KEY": "env-apikey-Q1w2e3r4",
    "TP_DSN": "postgres://app:dsn-pass-666@db.internal/main",
    "TP_ENDPOINT": "https://svc.example/v1?sig=env-endpoint-sig-55",
    "TP_GH_TOKEN": "ghp_copiedFromHostEnv77",
}

CONFIG = """
[packs.vault]
region = "eu-west-1"
passphrase = "lit-passphrase-1"
auth = "lit-auth-2"
session_cookie = "lit-cookie-3"
password = { user = "bob-user-name", value = "lit-nested-4", deeper = { x = "lit-deeper-5" } }
token = "lit-token-6"
api_key = { env = "TP_API_KEY", default = "lit-default-7" }
db_password = "lit-password-8"
mirror = "env-apikey-Q1w2e3r4"
endpoint = { env = "TP_ENDPOINT" }
header = "Bearer abc123def456ghi"
plain_looking = "ghp_abcdefghijkl123"
url = "https://user:url-pass-9@example.com/x"

[packs.broken]
fail = true
dsn = { env = "TP_DSN" }

[mcp_servers.gh]
command = "definitely-not-a-command-xyz"
args = ["--token", "argtok-1234567", "--api-key=argkey-1234567", "--verbose"]
env = { GITHUB_TOKEN = "ghp_mcpEnvSecret99", LOG_LEVEL = "debug" }

[mcp_servers.gh2]
command = "definitely-not-a-command-xyz"
env = ["TP_GH_TOKEN"]
"""

SECRETS = [
    "lit-passphrase-1",
    "lit-auth-2",
    "lit-cookie-3",
    "bob-user-name",
    "lit-nested-4",
    "lit-deeper-5",
    "lit-token-6",
    "lit-default-7",
    "lit-password-8",
    "abc123def456ghi",
    "ghp_abcdefghijkl123",
    "url-pass-9",
    "argtok-1234567",
    "argkey-1234567",
    "ghp_mcpEnvSecret99",
    *ENVIRONMENT.values(),
    "dsn-pass-666",
    "env-endpoint-sig-55",
    "cG9zdGdyZXM6Ly9hcHA6ZHNu",  # base64 of the start of the DSN
    "dsn-pass-666%40db",  # the DSN percent-encoded
]


@pytest.fixture
def project(site: Any) -> dict[str, str]:
    """Two installed packs, a configuration full of secrets, and the environment to run in."""
    site.pack("vault", PACK)
    site.pack("broken", PACK)
    Path("toolpacks.toml").write_text(CONFIG, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(ENVIRONMENT)
    env["PYTHONPATH"] = str(site.root)
    env["TOOLPACKS_PACKS"] = "vault,broken,gh,gh2"
    return env


def toolpacks(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolpacks", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def assert_no_secret(done: subprocess.CompletedProcess[str]) -> None:
    for stream, text in (("stdout", done.stdout), ("stderr", done.stderr)):
        for secret in SECRETS:
            assert secret not in text, f"{secret!r} in {stream}:\n{text}"


def test_the_keys_used_here_are_secret_keys() -> None:
    """The key forms the issue names count as secret; ordinary ones do not."""
    for key in ("passphrase", "auth", "session_cookie", "token", "api_key", "password"):
        assert is_secret_key(key), key
    for key in ("x-auth", "sessionId", "credentials", "private_key", "OAuthToken", "pwd"):
        assert is_secret_key(key), key
    for key in ("region", "author", "authority", "endpoint", "mirror", "url", "path"):
        assert not is_secret_key(key), key


@pytest.mark.parametrize("json_output", [False, True], ids=["human", "json"])
@pytest.mark.parametrize("name", ["vault", "broken", "gh", "gh2", "vault.ping"])
def test_show_prints_no_secret(project: dict[str, str], name: str, json_output: bool) -> None:
    """``show`` of a pack (loaded, failed, MCP) or a tool holds no secret, stdout or stderr.

    A pack that failed to load (``broken``; the MCP servers, whose commands do not exist) is
    shown all the same, and ``show`` exits 1 saying why.
    """
    argv = ["--config", "toolpacks.toml", "show", name, *(["--json"] if json_output else [])]
    done = toolpacks(project, *argv)
    failed = name in ("broken", "gh", "gh2")
    assert done.returncode == (1 if failed else 0), done.stderr
    if failed:
        assert f"toolpacks: error: pack {name!r} failed to load: " in done.stderr
    assert_no_secret(done)
    if json_output:
        data = json.loads(done.stdout)
        if name == "vault":
            settings = data["settings"]
            assert settings["region"] == "eu-west-1"
            assert settings["password"] == {
                "user": "****",
                "value": "****",
                "deeper": {"x": "****"},
            }
            assert settings["api_key"] == {"env": "TP_API_KEY", "default": "****"}
            assert settings["mirror"] == "****"  # equals a value read from the environment
            assert settings["url"] == "https://user:****@example.com/x"
        if name == "broken":
            assert data["status"] == "failed"
            assert "RuntimeError: cannot connect to ****" in data["error"]
        if name == "vault.ping":
            assert data["description"] == "Ping the service at ****."
    elif name == "vault":
        assert "setting region = 'eu-west-1'" in done.stdout
        assert "setting passphrase = '****'" in done.stdout


@pytest.mark.parametrize("json_output", [False, True], ids=["human", "json"])
@pytest.mark.parametrize("explicit", [True, False], ids=["explicit", "implicit"])
def test_doctor_prints_no_secret(
    project: dict[str, str], json_output: bool, explicit: bool
) -> None:
    """``doctor`` reports the broken pack and the MCP servers without a secret."""
    argv = [*(["--config", "toolpacks.toml"] if explicit else []), "doctor"]
    done = toolpacks(project, *argv, *(["--json"] if json_output else []))
    assert done.returncode == 1, done.stderr
    assert_no_secret(done)
    assert "pack broken" in done.stdout
    if explicit:
        assert "RuntimeError: cannot connect to ****" in done.stdout
    else:  # untrusted: the pack never gets the settings it would fail on
        assert "toolpacks trust" in done.stdout
    if json_output:
        data = json.loads(done.stdout)
        assert data["ok"] is False
        topics = {f["topic"] for f in data["findings"]}
        assert {"pack broken", "pack gh", "pack gh2"} <= topics
