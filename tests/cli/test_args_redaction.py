"""An MCP server's secrets never reach what the command line prints, run in-process.

Two roads: the server's arguments (``--token X``, ``GITHUB_TOKEN=X`` for ``docker run -e``,
``--header "Authorization: Bearer X"``), which messages describing the server quote; and what
the server itself prints (stderr lines relayed to logs and error messages, stray stdout lines
the MCP SDK would log with their text).
"""

from __future__ import annotations

import json
import logging
import sys
import textwrap
from pathlib import Path

import pytest

from toolpacks.cli._main import main
from toolpacks.host.config._load import redact_args
from toolpacks.packs.mcp._spec import ServerSpec

ARG_SECRETS = {
    "--token": "argtok-1234567",
    "--api-key=": "argkey-1234567",
    "GITHUB_TOKEN=": "ghp_dockerEnvToken42",
    "Authorization: Bearer ": "hdrcred-9876543",
    "--pass": "passval-24680",
}

ARGS = [
    "--token",
    "argtok-1234567",
    "--api-key=argkey-1234567",
    "-e",
    "GITHUB_TOKEN=ghp_dockerEnvToken42",
    "--header",
    "Authorization: Bearer hdrcred-9876543",
    "--pass",
    "passval-24680",
    "--port",
    "8080",
    "-p",
    "9090",
    "--verbose",
]

LEAKY_SERVER = """
import os
import sys

from mcp.server.mcpserver import MCPServer

token = os.environ["API_TOKEN"]
print("starting; token is", token, file=sys.stderr, flush=True)
sys.stdout.write("debug: token=" + token + "\\n")
sys.stdout.write('{"debug": "' + token + '"}\\n')
sys.stdout.flush()
server = MCPServer("leaky")


@server.tool()
def echo(text: str) -> str:
    \"\"\"The text, back.\"\"\"
    print("echo called; token is", token, file=sys.stderr, flush=True)
    return text


server.run()
"""

SERVER_SECRET = "s3cr3t-value-778899"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Run the CLI in-process; the exit status and everything it printed."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out + err


def assert_hidden(text: str, secrets: list[str]) -> None:
    for secret in secrets:
        assert secret not in text, f"{secret!r} printed:\n{text}"


def test_redact_args_hides_every_secret_form_and_keeps_the_rest() -> None:
    """Flags, ``--flag=``, ``NAME=`` and ``Name:`` forms; ports and other flags stay."""
    assert redact_args(ARGS) == [
        "--token",
        "****",
        "--api-key=****",
        "-e",
        "GITHUB_TOKEN=****",
        "--header",
        "Authorization: ****",
        "--pass",
        "****",
        "--port",
        "8080",
        "-p",
        "9090",
        "--verbose",
    ]
    assert redact_args(["https://bob:url-pw-1234@example.com/x"]) == [
        "https://bob:****@example.com/x"
    ]


def test_a_server_described_in_messages_shows_no_argument_secret() -> None:
    """``ServerSpec.describe()`` (every message and log line about a server) hides them."""
    shown = ServerSpec(name="gh", command="docker", args=("run", *ARGS)).describe()
    assert_hidden(shown, list(ARG_SECRETS.values()))
    assert shown.startswith("MCP server 'gh' (docker run --token **** ")


@pytest.fixture
def failing_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A configuration (passed with --config) mounting a server that cannot start."""
    config = tmp_path / "conf" / "toolpacks.toml"
    config.parent.mkdir()
    config.write_text(
        f'[mcp_servers.gh]\ncommand = "definitely-not-a-command-xyz"\nargs = {json.dumps(ARGS)}\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("TOOLPACKS_PACKS", "gh")
    return config


@pytest.mark.parametrize(
    "argv",
    [("list", "--tools", "--json"), ("list", "--tools"), ("show", "gh"), ("doctor",)],
)
def test_no_command_prints_a_server_argument_secret(
    capsys: pytest.CaptureFixture[str], failing_server: Path, argv: tuple[str, ...]
) -> None:
    """The failed server's error quotes its command line, with the secrets hidden."""
    _, printed = run(capsys, "--config", str(failing_server), *argv)
    assert "gh" in printed
    assert "definitely-not-a-command-xyz" in printed
    assert_hidden(printed, list(ARG_SECRETS.values()))


@pytest.mark.slow
def test_a_server_printing_its_secret_shows_it_nowhere(
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its stderr lines, stray stdout lines and SDK log records are scrubbed, at every level."""
    script = tmp_path / "leaky_server.py"
    script.write_text(textwrap.dedent(LEAKY_SERVER), encoding="utf-8")
    config = tmp_path / "conf" / "toolpacks.toml"
    config.parent.mkdir()
    config.write_text(
        "[mcp_servers.leaky]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(script))}]\n"
        "timeout = 60\n"
        f'env = {{ API_TOKEN = "{SERVER_SECRET}" }}\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("TOOLPACKS_PACKS", "leaky")
    caplog.set_level(logging.DEBUG)
    printed = ""
    for argv in (("doctor",), ("show", "leaky"), ("--verbose", "show", "leaky")):
        _, text = run(capsys, "--config", str(config), *argv)
        printed += text
    status, text = run(
        capsys,
        "--config",
        str(config),
        "--verbose",
        "call",
        "leaky.echo",
        "--args",
        '{"text": "hi"}',
    )
    assert status == 0, text
    printed += text
    assert "hi" in printed
    logged = "\n".join(
        logging.Formatter("%(name)s %(message)s").format(record) for record in caplog.records
    )
    assert "starting; token is" in logged  # the relay did log the line, masked
    assert_hidden(printed + logged, [SERVER_SECRET])
