"""An isolated pack's secret settings are never written in clear (issue 37).

A pack whose tool description quotes a secret setting (``api_token`` read from the
environment) runs isolated: its tools are listed and answer, and no file toolpacks writes for
it (the manifest the child writes, environments, lock and stamp files under the cache
directory, the state directory, the child's private directory) holds the secret in any form:
plain, base64, percent-encoded or JSON-escaped. What the model is shown is what the same pack
shows in-process, so the isolated road neither hides nor adds anything. Each test runs real
child processes of a real pack, and every wait is bounded.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import tempfile
import textwrap
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from toolpacks.core._secrets import holds_secret

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

TOKEN = 'tok-Sierra"5b7d2e90/Kilo'
"""The secret: a quote and a slash, so JSON escapes it and percent-encoding changes it."""
DSN = "postgres://db.internal/orders?sslkey=Quebec42"
"""A value read from the environment under an ordinary key (``dsn``): a secret too."""
SECRETS = [TOKEN, DSN]

PACK = """
import os

from toolpacks import hookimpl, tool


@hookimpl
def register_tools(register):
    token = str(register.config["api_token"])

    @tool(description=f"Call the API as {token}.")
    def whoami(greeting: str = "hi") -> str:
        return f"{greeting}: a token of {len(token)} characters"

    @tool(description="Query " + str(register.config.get("dsn")))
    def query() -> str:
        return "queried"

    @tool
    def plain() -> str:
        '''A tool that quotes nothing; says whether the settings' variable is left.'''
        return "plain" if "TOOLPACKS_PACK_SETTINGS" not in os.environ else "left"

    register(whoami)
    register(query)
    register(plain)
"""


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Where toolpacks may write: the cache, the state directory and the temporary directory."""
    cache = Path(os.environ["TOOLPACKS_CACHE_DIR"])
    state = tmp_path / "state"
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(state))
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    monkeypatch.setenv("TPI_API_TOKEN", TOKEN)
    monkeypatch.setenv("TPI_DSN", DSN)
    return [cache, state, temp]


def forms(secret: str) -> list[str]:
    """The secret as a file could hold it: plain, base64 (both alphabets), quoted, JSON."""
    raw = secret.encode()
    return [
        secret,
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        quote(secret, safe=""),
        json.dumps(secret)[1:-1],
    ]


def leaks(places: list[Path]) -> list[str]:
    """Each file under ``places`` holding a secret in one of its forms."""
    found: list[str] = []
    for place in places:
        for path in (p for p in place.rglob("*") if p.is_file() and not p.is_symlink()):
            text = path.read_bytes().decode("latin-1")
            found_form = any(form in text for secret in SECRETS for form in forms(secret))
            if holds_secret(text, SECRETS) or found_form:
                found.append(str(path))
    return found


def config(isolate: bool = True) -> dict[str, Any]:
    table: dict[str, Any] = {"api_token": {"env": "TPI_API_TOKEN"}, "dsn": {"env": "TPI_DSN"}}
    if isolate:
        table["isolate"] = True
    return {"packs": {"sec": table}}


def call(toolset: Any, name: str, arguments: dict[str, Any]) -> Any:
    return asyncio.run(toolset.call(name, arguments))


def test_the_check_of_this_test_finds_every_form(tmp_path: Path) -> None:
    """``leaks`` finds each form of the secret in a file (a check of the test itself)."""
    every = [form for secret in SECRETS for form in forms(secret)]
    for n, form in enumerate(every):
        (tmp_path / f"f{n}").write_text(f"x {form} y")
    assert len(leaks([tmp_path])) == len(every)


def test_an_isolated_pack_quoting_a_secret_leaves_no_file_holding_it(
    site: Any, places: list[Path]
) -> None:
    """Listed, called, listed again by a second host: no file under any place holds it."""
    site.pack("sec", PACK)
    with site.host(config()) as host:
        toolset = host.toolset(packs=["sec"])
        assert toolset.get("whoami").description == f"Call the API as {TOKEN}."
        assert toolset.get("query").description == f"Query {DSN}"
        assert call(toolset, "whoami", {}).value == f"hi: a token of {len(TOKEN)} characters"
        assert leaks(places) == []  # the child's private directory included, while it runs
    written = list((places[0] / "isolated" / "manifests").iterdir())
    assert written, "the child wrote no manifest (this test would prove nothing)"
    with site.host(config()) as again:
        toolset = again.toolset(packs=["sec"])
        assert call(toolset, "whoami", {"greeting": "yo"}).value.startswith("yo: ")
        assert call(toolset, "plain", {}).value == "plain"
        assert leaks(places) == []
    assert leaks(places) == []


def test_the_model_is_shown_what_the_pack_shows_in_process(site: Any, places: list[Path]) -> None:
    """Definitions of the isolated pack, first and second host, are those of in-process."""
    site.pack("sec", PACK)
    with site.host(config(isolate=False)) as plain:
        expected = plain.toolset(packs=["sec"]).definitions("openai")
    for _ in range(2):  # the second host lists with the manifest the first one's child wrote
        with site.host(config()) as host:
            toolset = host.toolset(packs=["sec"])
            assert toolset.definitions("openai") == expected
            assert not call(toolset, "whoami", {}).is_error


def test_settings_too_large_for_a_variable_go_in_a_private_file_removed_at_close(
    site: Any, places: list[Path]
) -> None:
    """Past ``ENV_LIMIT`` the settings travel in a ``0600`` file, gone when the host closes."""
    from toolpacks.packs.isolated._child import ENV_LIMIT

    site.pack("sec", PACK)
    big = config()
    big["packs"]["sec"]["padding"] = [f"entry {n:06d}" for n in range(ENV_LIMIT // 10)]
    with site.host(big) as host:
        toolset = host.toolset(packs=["sec"])
        assert call(toolset, "plain", {}).value == "plain"
        (written,) = places[2].glob("toolpacks-sec-*/settings.json")
        assert written.stat().st_mode & 0o777 == 0o600
    assert not written.exists()
    assert leaks(places) == []


def test_an_own_environment_pack_leaves_no_file_holding_a_secret(
    tmp_path: Path, places: list[Path]
) -> None:
    """``[isolated.NAME]``: its environment, markers, locks and manifest hold no secret."""
    from toolpacks import Host

    repo = tmp_path / "repo" / "toolpacks-secenv"
    (repo / "secenv_pack").mkdir(parents=True)
    (repo / "secenv_pack" / "__init__.py").write_text(PACK, encoding="utf-8")
    (repo / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [build-system]
            requires = ["hatchling"]
            build-backend = "hatchling.build"

            [project]
            name = "toolpacks-secenv"
            version = "1.0"
            dependencies = ["toolpacks"]

            [project.entry-points.toolpacks]
            secenv = "secenv_pack"

            [tool.hatch.build.targets.wheel]
            packages = ["secenv_pack"]
            """
        ),
        encoding="utf-8",
    )
    settings = config(isolate=False)["packs"]["sec"]
    table = {"isolated": {"secenv": {"requirement": str(repo)}}, "packs": {"secenv": settings}}
    for _ in range(2):  # built, then listed with what the first host left in the cache
        with Host(table) as host:
            toolset = host.toolset(packs=["secenv"])
            assert toolset.get("whoami").description == f"Call the API as {TOKEN}."
            assert call(toolset, "plain", {}).value == "plain"
            assert not call(toolset, "whoami", {}).is_error
            assert leaks(places) == []
    assert list(places[0].glob("envs/*/toolpacks-env.json")), "no environment was walked"


def test_print_manifest_masks_a_secret_setting(site: Any, places: list[Path]) -> None:
    """``serve --pack --print-manifest`` run by hand masks a setting named like a secret."""
    import subprocess
    import sys

    site.pack("sec", PACK)
    settings = places[2] / "settings.json"
    settings.write_text(json.dumps({"api_token": TOKEN}), encoding="utf-8")
    argv = ["serve", "--pack", "sec", "--settings", str(settings), "--print-manifest"]
    done = subprocess.run(
        [sys.executable, "-m", "toolpacks", *argv, "--path", str(site.root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    shown = json.loads(done.stdout)
    assert {t["mcp"]["name"] for t in shown["tools"]} == {"whoami", "query", "plain"}
    assert not any(form in done.stdout for form in forms(TOKEN))
    assert "Call the API as **********." in done.stdout
