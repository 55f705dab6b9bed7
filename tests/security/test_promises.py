"""Promises of docs/guides/security.md that no other test holds.

Policies see validated arguments with secrets masked (``authorize`` hooks and the approval
handler), a value JSON cannot hold is an error naming its type (never a repr with a memory
address), MCP servers are started without a shell, an async tool with no timeout is reported
once it blocks the loop past the default limit, and the serve grace periods are as documented.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from toolpacks import Host, Toolset, hookimpl, tool

PASSWORD = "hunter2-Secret-9931"


@tool(require_approval=True)
def pay(amount: int, password: SecretStr, note: str = "") -> str:
    """Pay an amount, authenticated by a password."""
    return f"paid {amount}"


# -- policies see validated arguments, secrets masked -----------------------------------------


def _policy_toolset(seen: list[tuple[str, dict[str, Any]]]) -> Toolset:
    """``pay`` behind a pack's ``authorize`` hook and an approval handler that record."""

    class Policy:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(pay)

        @hookimpl
        def authorize(self, tool: Any, arguments: dict[str, Any], context: Any) -> None:
            seen.append(("authorize", dict(arguments)))

    def approve(request: Any) -> bool:
        seen.append(("approval", dict(request.arguments)))
        return True

    host = Host({}, discover=False, approval=approve)
    host.add_pack(Policy(), "payments")
    return host.toolset()


@pytest.mark.parametrize("as_text", [False, True], ids=["dict", "json-text"])
def test_authorize_and_approval_see_validated_arguments_with_secrets_masked(
    as_text: bool,
) -> None:
    """``"7"`` arrives as 7 and the ``SecretStr`` as a mask, in the hook and the handler."""
    seen: list[tuple[str, dict[str, Any]]] = []
    toolset = _policy_toolset(seen)
    arguments: dict[str, Any] = {"amount": "7", "password": PASSWORD}
    result = asyncio.run(toolset.call("pay", json.dumps(arguments) if as_text else arguments))
    assert result.value == "paid 7", result.content
    assert [who for who, _ in seen] == ["authorize", "approval"]
    for who, payload in seen:
        assert payload["amount"] == 7, who
        assert payload["password"] == "**********", who
        assert PASSWORD not in repr(payload), who


def test_invalid_arguments_never_reach_a_policy() -> None:
    """A call the gate refuses is refused before any hook or person is asked."""
    seen: list[tuple[str, dict[str, Any]]] = []
    toolset = _policy_toolset(seen)
    for arguments in (
        {"amount": True, "password": PASSWORD},
        {"amount": 1, "password": PASSWORD, "note": "a\ud800"},
        '{"amount": 1, "amount": 2, "password": "x"}',
        {"amount": float("nan"), "password": PASSWORD},
    ):
        result = asyncio.run(toolset.call("pay", arguments))
        assert result.error is not None
        assert result.error.kind == "invalid_arguments"
        assert PASSWORD not in result.content
    assert seen == []


# -- values JSON cannot hold ------------------------------------------------------------------


class Opaque:
    """A class with no text of its own: its repr would be a memory address."""


class Described:
    """A class that says what it is."""

    def __str__(self) -> str:
        return "described value"


@tool
def opaque() -> Any:
    """Return an object JSON cannot hold."""
    return Opaque()


@tool
def opaque_inside() -> Any:
    """Return a list holding such an object."""
    return [1, Opaque()]


@tool
def described() -> Any:
    """Return an object with its own ``__str__``."""
    return Described()


@pytest.mark.parametrize("road", ["invoke", "toolset"])
def test_a_value_json_cannot_hold_is_an_error_naming_its_type(road: str) -> None:
    """``output_invalid`` says the type; no ``<... object at 0x...>`` reaches the model."""
    call = opaque.invoke({}) if road == "invoke" else Toolset([opaque]).call("opaque", {})
    result = asyncio.run(call)
    assert result.error is not None
    assert result.error.kind == "output_invalid"
    assert "returned a value of type Opaque, which cannot be sent as JSON" in result.content
    assert " at 0x" not in result.content
    assert "object at" not in result.content


@pytest.mark.parametrize("road", ["invoke", "toolset"])
def test_a_list_holding_such_a_value_renders_as_a_note_naming_the_type(road: str) -> None:
    """The documented fallback for a dict or list: checked when its text is read.

    The call succeeds (its value is kept for the application); the text the model gets
    names the type and holds no address.
    """
    call = (
        opaque_inside.invoke({})
        if road == "invoke"
        else Toolset([opaque_inside]).call("opaque_inside", {})
    )
    result = asyncio.run(call)
    assert result.content == (
        "[the result holds a value of type Opaque, which cannot be sent as JSON]"
    )
    assert " at 0x" not in result.content


@pytest.mark.parametrize("road", ["invoke", "toolset"])
def test_a_class_with_its_own_str_is_rendered_with_str(road: str) -> None:
    """The documented fallback: a class defining ``__str__`` (or ``__repr__``) is sent as text."""
    call = described.invoke({}) if road == "invoke" else Toolset([described]).call("described")
    result = asyncio.run(call)
    assert not result.is_error, result.content
    assert result.content == "described value"


# -- MCP servers are started without a shell --------------------------------------------------

ARGV_SCRIPT = "import json, sys; open('argv.json', 'w').write(json.dumps(sys.argv[1:]))"
SHELL_SYNTAX = ["$(touch pwned1)", "; touch pwned2", "`touch pwned3`", "| touch pwned4", "*"]


def test_mcp_servers_are_started_from_an_argument_list_without_a_shell(tmp_path: Path) -> None:
    """Shell syntax in ``args`` reaches the program as text, and a command is not split."""
    servers = {
        "argv": {
            "command": sys.executable,
            "args": ["-c", ARGV_SCRIPT, *SHELL_SYNTAX],
            "cwd": str(tmp_path),
            "timeout": 10,
        },
        "split": {"command": f"{sys.executable} -c pass", "timeout": 10},
    }
    with Host({"mcp_servers": servers}, discover=False) as host:
        host.toolset()  # starts both; neither is an MCP server, so both packs fail
        assert host.pack("argv").status == "failed"
        split = host.pack("split")
        assert split.status == "failed"
        assert "was not found" in (split.error or "")
    assert json.loads((tmp_path / "argv.json").read_text()) == SHELL_SYNTAX
    assert sorted(p.name for p in tmp_path.iterdir()) == ["argv.json"]


# -- defaults the page states -----------------------------------------------------------------


def test_an_async_tool_without_a_timeout_is_reported_past_the_default_limit(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The limit is the tool's timeout, else ``BLOCK_LIMIT`` (5 s, shortened here)."""
    from toolpacks.core.call import _watchdog

    assert _watchdog.BLOCK_LIMIT == 5.0
    monkeypatch.setattr(_watchdog, "BLOCK_LIMIT", 0.3)

    @tool
    async def busy() -> str:
        """Block the loop (wrongly), with no timeout."""
        time.sleep(0.8)  # noqa: ASYNC251 - the behaviour under test
        return "done"

    with caplog.at_level(logging.ERROR, logger="toolpacks"):
        result = asyncio.run(busy.invoke({}))
    assert result.value == "done"  # no timeout: the call itself is not cut short
    reports = [r.getMessage() for r in caplog.records if "blocked the event loop" in r.getMessage()]
    assert len(reports) == 1
    assert "'busy'" in reports[0]
    assert "limit 0.3 s" in reports[0]
    assert "async tools must not block" in reports[0]


def test_serve_grace_periods_and_their_override(monkeypatch: pytest.MonkeyPatch) -> None:
    """2 s after end of input, 10 s after a signal; TOOLPACKS_SERVE_GRACE replaces both."""
    from toolpacks.mcp import _stdio

    assert (_stdio.GRACE_ON_EOF, _stdio.GRACE_ON_SIGNAL) == (2.0, 10.0)
    assert _stdio.GRACE_ENV == "TOOLPACKS_SERVE_GRACE"
    monkeypatch.delenv("TOOLPACKS_SERVE_GRACE", raising=False)
    assert _stdio._grace(_stdio.GRACE_ON_SIGNAL) == 10.0
    monkeypatch.setenv("TOOLPACKS_SERVE_GRACE", "0.5")
    assert _stdio._grace(_stdio.GRACE_ON_EOF) == 0.5
    assert _stdio._grace(_stdio.GRACE_ON_SIGNAL) == 0.5
    monkeypatch.setenv("TOOLPACKS_SERVE_GRACE", "soon")
    assert _stdio._grace(_stdio.GRACE_ON_EOF) == 2.0


# -- the page itself --------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
CITED = re.compile(r"`((?:tests|plugins)/[\w./-]+\.py)::(\w+)`")


def test_every_test_the_security_page_names_exists() -> None:
    """Each ``file::test`` cited by docs/guides/security.md is a test function in that file."""
    page = (ROOT / "docs" / "guides" / "security.md").read_text(encoding="utf-8")
    cited = CITED.findall(page)
    assert len(cited) > 50
    missing = [
        f"{path}::{name}"
        for path, name in cited
        if not (ROOT / path).is_file()
        or not re.search(rf"^(async )?def {name}\(", (ROOT / path).read_text("utf-8"), re.M)
    ]
    assert not missing, f"docs/guides/security.md names tests that do not exist: {missing}"
