"""Results and secrets: nothing unintended reaches the model or the log."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from pydantic import SecretStr

from toolpacks import CallOptions, Tool, ToolError, hookimpl, tool
from toolpacks.testing import make_host

PASSWORD = "hunter2-very-secret"


def run(t: Tool, arguments: Any, options: CallOptions | None = None) -> Any:
    return asyncio.run(t.invoke(arguments, options=options))


@tool
def leaky(password: SecretStr, user: str) -> str:
    """Log in, badly: the exception quotes the password."""
    raise RuntimeError(f"login failed for {user} with {password.get_secret_value()}")


def test_unexpected_exception_text_is_not_sent_by_default(caplog: pytest.LogCaptureFixture) -> None:
    """The model sees the tool and the exception type; the traceback goes to the log."""

    @tool
    def boom() -> str:
        """Fails."""
        raise KeyError("internal detail: db at 10.0.0.5")

    with caplog.at_level(logging.ERROR, logger="toolpacks"):
        result = run(boom, {})
    assert result.content == "Tool 'boom' failed with KeyError."
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "10.0.0.5" not in result.content
    assert "Traceback" in caplog.text
    assert "internal detail" in caplog.text


def test_tool_error_message_passes_through() -> None:
    """A ToolError is raised on purpose: its message reaches the model."""

    @tool
    def picky(n: int) -> int:
        """Refuses odd numbers."""
        raise ToolError("n must be even; try n + 1")

    assert run(picky, {"n": 3}).content == "Tool 'picky' failed: n must be even; try n + 1"


def test_expose_errors_shows_details_for_trusted_use() -> None:
    """With expose_errors the exception type and message reach the model."""

    @tool
    def boom() -> str:
        """Fails."""
        raise ValueError("bad state")

    result = run(boom, {}, CallOptions(expose_errors=True))
    assert result.content == "Tool 'boom' failed: ValueError: bad state"


def test_secretstr_value_is_redacted_from_error_results_and_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A SecretStr argument never appears in an error result, even exposed, nor in the log."""
    with caplog.at_level(logging.ERROR, logger="toolpacks"):
        exposed = run(leaky, {"password": PASSWORD, "user": "ada"}, CallOptions(expose_errors=True))
        masked = run(leaky, {"password": PASSWORD, "user": "ada"})
    assert exposed.error is not None
    assert exposed.error.kind == "tool_error"
    assert masked.error is not None
    assert masked.error.kind == "tool_error"
    assert PASSWORD not in exposed.content
    assert "**********" in exposed.content
    assert PASSWORD not in masked.content
    assert PASSWORD not in caplog.text
    assert "login failed for ada" in caplog.text


def test_secretstr_value_is_redacted_from_validation_errors() -> None:
    """An invalid SecretStr argument is reported without echoing its value."""

    @tool
    def login(password: SecretStr, pin: int) -> str:
        """Log in."""
        return "ok"

    result = run(login, {"password": PASSWORD, "pin": "not-a-pin"})
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert PASSWORD not in result.content
    assert PASSWORD not in repr(result.to_dict())


def test_secretstr_value_is_redacted_from_hook_payloads() -> None:
    """before_invoke hooks, per-tool and global, see a mask instead of the secret."""
    seen: list[dict[str, Any]] = []

    @tool
    def login(password: SecretStr, user: str) -> str:
        """Log in."""
        return f"welcome {user}"

    @login.before_invoke
    def record(**kwargs: Any) -> None:
        seen.append(kwargs)

    class Audit:
        @hookimpl
        def register_tools(self, register):  # type: ignore[no-untyped-def]
            register(login)

        @hookimpl
        def before_invoke(self, tool, arguments, context):  # type: ignore[no-untyped-def]
            seen.append(dict(arguments))

    toolset = make_host(Audit(), names=["auth"]).toolset()
    result = asyncio.run(toolset.call("login", {"password": PASSWORD, "user": "ada"}))
    assert result.value == "welcome ada"
    assert len(seen) == 2
    for payload in seen:
        assert payload["password"] == "**********"
        assert PASSWORD not in repr(payload)


def test_secret_looking_config_values_are_redacted_from_error_results() -> None:
    """A pack setting named like a secret is scrubbed from exposed error messages."""

    class Api:
        @hookimpl
        def register_tools(self, register):  # type: ignore[no-untyped-def]
            token = register.config["api_token"]

            def fetch(url: str) -> str:
                """Fetch a URL."""
                raise RuntimeError(f"401 for {url} with token {token}")

            register(fetch)

    host = make_host(
        Api(),
        names=["api"],
        settings={"api": {"api_token": "tok-123456789"}},
        config={"settings": {"expose_errors": True}},
    )
    result = asyncio.run(host.toolset().call("fetch", {"url": "https://x"}))
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "tok-123456789" not in result.content
    assert "401 for https://x" in result.content


def test_large_result_is_truncated_with_a_marker() -> None:
    """Text beyond max_content_chars is cut and says how much was omitted; value stays raw."""

    @tool
    def big() -> str:
        """A lot of text."""
        return "x" * 5000

    result = run(big, {}, CallOptions(max_content_chars=100))
    assert result.content.startswith("x" * 100)
    assert "[... truncated: 4900 of 5000 characters omitted]" in result.content
    assert len(result.value) == 5000


def test_result_violating_the_declared_output_type_is_an_error() -> None:
    """A tool declared `-> int` that returns text gives an output_invalid error result."""

    @tool
    def liar() -> int:
        """Claims an int."""
        return "not an int"  # type: ignore[return-value]

    result = run(liar, {})
    assert result.is_error
    assert result.error.kind == "output_invalid"
    assert "expected int, got str" in result.content
