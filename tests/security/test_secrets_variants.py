"""Secrets in encoded forms, and secrets in ``repr()``.

A secret that a tool's exception quotes percent-encoded, in base64 (alone or inside a longer
base64 text), in hex or escaped is scrubbed like the plain value: from the error result and
from the logged traceback, whichever road the secret came by (``CallOptions.redact``, a
``SecretStr`` argument, a pack setting read from the environment). No ``repr()`` or ``str()``
of the host's configuration, a toolset, its entries or their options holds a secret.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, unquote_to_bytes

import pytest
from pydantic import SecretStr

from toolpacks import CallOptions, Host, Tool, hookimpl, tool
from toolpacks.core._secrets import MASK, scrub

SECRET = "s3cr3t/p@ss w0rd+é:xyz"
"""A secret with characters that every encoding changes."""


def _b64_inside(prefix: bytes, suffix: bytes) -> Callable[[str], str]:
    def encode(secret: str) -> str:
        return base64.b64encode(prefix + secret.encode() + suffix).decode()

    return encode


VARIANTS: dict[str, Callable[[str], str]] = {
    "plain": lambda s: s,
    "quote": lambda s: quote(s, safe=""),
    "quote-default-safe": quote,
    "quote_plus": quote_plus,
    "quote-lowercase-hex": lambda s: "%".join(
        [quote(s, safe="").split("%")[0]]
        + [p[:2].lower() + p[2:] for p in quote(s, safe="").split("%")[1:]]
    ),
    "base64": lambda s: base64.b64encode(s.encode()).decode(),
    "base64-unpadded": lambda s: base64.b64encode(s.encode()).decode().rstrip("="),
    "base64-urlsafe": lambda s: base64.urlsafe_b64encode(s.encode()).decode(),
    "base64-urlsafe-unpadded": lambda s: base64.urlsafe_b64encode(s.encode()).decode().rstrip("="),
    "base64-basic-auth": lambda s: base64.b64encode(b"admin:" + s.encode()).decode(),
    "base64-offset-1": _b64_inside(b"x", b""),
    "base64-offset-2": _b64_inside(b"xy", b""),
    "base64-offset-1-tail": _b64_inside(b"u", b"!?"),
    "base64-offset-2-tail": _b64_inside(b"uv", b"!"),
    "base64-urlsafe-offset-1": lambda s: base64.urlsafe_b64encode(
        b"{" + s.encode() + b"}"
    ).decode(),
    "hex": lambda s: s.encode().hex(),
    "hex-upper": lambda s: s.encode().hex().upper(),
    "json": lambda s: json.dumps(s)[1:-1],
    "json-unicode": lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    "repr": lambda s: repr(s)[1:-1],
    "repr-bytes": lambda s: repr(s.encode())[2:-1],
}


_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{4,}")
_HEX_RUN = re.compile(r"[0-9A-Fa-f]{8,}")


def decoded_views(text: str) -> list[bytes]:
    """``text`` as bytes, percent-decoded, and every hex or base64 run in it decoded."""
    views = [
        text.encode("utf-8", "surrogatepass"),
        unquote_to_bytes(text),
        unquote_to_bytes(text.replace("+", " ")),
    ]
    for run in _HEX_RUN.findall(text):
        for start in (0, 1):
            part = run[start:]
            views.append(bytes.fromhex(part[: len(part) // 2 * 2]))
    for run in _BASE64_RUN.findall(text):
        standard = run.replace("-", "+").replace("_", "/")
        for start in range(4):
            part = standard[start:]
            part = part[: len(part) // 4 * 4]
            if part:
                views.append(base64.b64decode(part))
    return views


def assert_hidden(text: str, secret: str, variant: str) -> None:
    """No five bytes of the secret can be read from ``text``, however it was encoded.

    Around a secret embedded in a longer base64 text, the characters shared with the
    neighbouring bytes stay; they hold at most a few bits of the secret.
    """
    assert secret not in text
    assert variant not in text
    data = secret.encode("utf-8", "surrogatepass")
    windows = {data[i : i + 5] for i in range(len(data) - 4)}
    for view in decoded_views(text):
        leaked = [w for w in windows if w in view]
        assert not leaked, f"{leaked} readable in {text!r}"


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_scrub_removes_every_encoded_form(name: str) -> None:
    """``scrub`` finds the secret percent-encoded, in base64 (any alignment), hex, escaped."""
    variant = VARIANTS[name](SECRET)
    text = f"request failed: token={variant}; retry later"
    out = scrub(text, [SECRET])
    assert MASK in out
    assert out.startswith("request failed: token=")
    assert out.endswith("; retry later")
    assert_hidden(out, SECRET, variant)


@pytest.mark.parametrize("secret", ["abcdefgh1234", "pä$$wörd-ü", "tok en\nwith\tescapes\\"])
def test_scrub_covers_ascii_unicode_and_escapes(secret: str) -> None:
    """Every form of plain, non-ASCII and escape-laden secrets is scrubbed."""
    for name, encode in VARIANTS.items():
        variant = encode(secret)
        out = scrub(f"<{variant}>", [secret])
        assert MASK in out, name
        assert_hidden(out, secret, variant)


def test_scrub_leaves_other_text_alone() -> None:
    """Text without a secret comes back unchanged; only the secret's forms are replaced."""
    text = "a normal traceback line 42 with aGVsbG8gd29ybGQ= and 68656c6c6f and %2F"
    assert scrub(text, [SECRET, "another-secret-value"]) == text
    assert scrub(text, []) == text


def test_short_secrets_are_scrubbed_only_verbatim() -> None:
    """A secret of under four characters is replaced as it is; its encodings are too short."""
    assert scrub("abc YWJj 616263", ["abc"]) == f"{MASK} YWJj 616263"


def test_longer_secret_wins_over_its_prefix() -> None:
    """When one secret starts another, the longer is replaced whole."""
    assert scrub("x=prefix-123-and-more y", ["prefix-123", "prefix-123-and-more"]) == (
        f"x={MASK} y"
    )


def test_scrub_survives_lone_surrogates_and_odd_masks() -> None:
    """A secret holding a lone surrogate, and a mask with backslashes, do not break scrub."""
    secret = "bad\udcffsecret"
    assert scrub(f"x{secret}y", [secret]) == f"x{MASK}y"
    assert scrub("a SECRET-VALUE b", ["SECRET-VALUE"], mask=r"\1\g<0>") == r"a \1\g<0> b"


def test_scrub_is_cheap_for_ten_secrets_and_ten_kilobytes() -> None:
    """Ten secrets in a 10 kB message: the pattern is built once, each scrub is quick."""
    secrets = [f"secret-{i}-{'Zq9/+'[i % 5]}-value-{i * 7919}" for i in range(10)]
    body = "Traceback (most recent call last):\n  File 'x.py', line 1, in f\n" * 160
    message = body[:9_000] + " ".join(quote(s, safe="") for s in secrets) + body[:800]
    assert len(message) >= 10_000
    started = time.perf_counter()
    out = scrub(message, secrets)
    first = time.perf_counter() - started
    runs = 50
    started = time.perf_counter()
    for _ in range(runs):
        scrub(message, secrets)
    each = (time.perf_counter() - started) / runs
    assert out.count(MASK) == 10
    assert first < 0.5
    assert each < 0.01, f"scrub took {each * 1000:.2f} ms"


# -- through a tool: the error result and the logged traceback -----------------------------------


def raising(variant: Callable[[str], str], secret_of: Callable[[Any], str]) -> Tool:
    """A tool whose exception quotes an encoded form of the secret it is given."""

    @tool
    def leak(password: SecretStr) -> str:
        """Fails, quoting the credential in some encoding."""
        raise RuntimeError(f"auth rejected: {variant(secret_of(password))}")

    return leak


def check_result(result: Any, caplog: pytest.LogCaptureFixture, variant: str) -> None:
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "auth rejected" in result.content
    assert_hidden(result.content, SECRET, variant)
    assert "Traceback" in caplog.text
    assert "auth rejected" in caplog.text
    assert_hidden(caplog.text, SECRET, variant)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_encoded_secretstr_argument_is_scrubbed(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A ``SecretStr`` argument quoted in any encoding leaves neither result nor log."""
    encode = VARIANTS[name]
    leak = raising(encode, lambda p: p.get_secret_value())
    with caplog.at_level(logging.ERROR, logger="toolpacks"):
        result = asyncio.run(
            leak.invoke({"password": SECRET}, options=CallOptions(expose_errors=True))
        )
    check_result(result, caplog, encode(SECRET))


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_encoded_redact_option_value_is_scrubbed(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A value listed in ``CallOptions.redact`` is scrubbed in every encoding."""
    encode = VARIANTS[name]
    leak = raising(encode, lambda _: SECRET)
    options = CallOptions(expose_errors=True, redact=("unrelated-value", SECRET))
    with caplog.at_level(logging.ERROR, logger="toolpacks"):
        result = asyncio.run(leak.invoke({"password": "not-it"}, options=options))
    check_result(result, caplog, encode(SECRET))


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_encoded_env_setting_is_scrubbed(
    name: str, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """A pack setting read from the environment is scrubbed in every encoding."""
    encode = VARIANTS[name]

    class Api:
        @hookimpl
        def register_tools(self, register):  # type: ignore[no-untyped-def]
            token = register.config["api_token"]

            def call_api() -> str:
                """Calls the API."""
                raise RuntimeError(f"auth rejected: {encode(token)}")

            register(call_api)

    config = tmp_path / "toolpacks.toml"
    config.write_text(
        '[packs.api]\napi_token = { env = "TP_VARIANT_TOKEN" }\n[settings]\nexpose_errors = true\n',
        encoding="utf-8",
    )
    host = Host(config, discover=False, environ={"TP_VARIANT_TOKEN": SECRET})
    host.add_pack(Api(), "api")
    with caplog.at_level(logging.ERROR, logger="toolpacks"):
        result = asyncio.run(host.toolset().call("call_api", {}))
    check_result(result, caplog, encode(SECRET))


# -- repr() ---------------------------------------------------------------------------------------


ENV_SECRET = "env-resolved-Secret-7781"
MCP_SECRET = "ghp_mcpServerSecret1234"
LITERAL_SECRET = "literal-passphrase-3391"


def test_call_options_repr_counts_redacted_values() -> None:
    """``CallOptions`` shows how many values it redacts, never the values."""
    options = CallOptions(redact=("one-secret", "two-secret", "three-secret"))
    assert "redact=<3 values>" in repr(options)
    assert "one-secret" not in repr(options)
    assert "redact=<1 value>" in str(CallOptions(redact=("x",)))
    assert "redact=<0 values>" in repr(CallOptions())


def test_no_secret_in_any_repr_of_host_toolset_entry_or_options(tmp_path: Path) -> None:
    """Secrets from the environment, the file and an MCP server's env are in no repr/str."""

    class Api:
        @hookimpl
        def register_tools(self, register):  # type: ignore[no-untyped-def]
            def ping() -> str:
                """Answers."""
                return "pong"

            register(ping)

    config = tmp_path / "toolpacks.toml"
    config.write_text(
        f"""
[packs.api]
region = "eu"
api_token = {{ env = "TP_REPR_TOKEN" }}
passphrase = "{LITERAL_SECRET}"
auth = {{ user = "bob", password = "{LITERAL_SECRET}" }}

[mcp_servers.gh]
command = "definitely-not-a-command-xyz"
args = ["--token", "{MCP_SECRET}", "--api-key={MCP_SECRET}"]
env = {{ GITHUB_TOKEN = "{MCP_SECRET}", PLAIN = "{MCP_SECRET}" }}
""",
        encoding="utf-8",
    )
    host = Host(config, discover=False, environ={"TP_REPR_TOKEN": ENV_SECRET})
    host.add_pack(Api(), "api")
    toolset = host.toolset(packs=["api"])
    (entry,) = toolset.entries()
    assert ENV_SECRET in entry.options.redact  # the secret is known, to be scrubbed
    shown = [
        host.config,
        host.config.config,
        host.config.config.mcp_servers["gh"],
        toolset,
        entry,
        entry.options,
    ]
    for obj in shown:
        for text in (repr(obj), str(obj)):
            for secret in (ENV_SECRET, MCP_SECRET, LITERAL_SECRET):
                assert secret not in text, f"{type(obj).__name__}: {text}"
    assert "redact=<" in repr(entry)
    assert "GITHUB_TOKEN" in repr(host.config)  # names stay visible
    assert "region" in repr(host.config)
