"""Each way ``core._secrets`` recognises or hides a secret, pinned by its own test.

``test_secrets_variants.py`` checks that no five bytes of a secret survive a scrub. These
tests pin the branches that check leaves alive: forms it does not need for its secret (JSON
with non-ASCII text, ``repr`` of control characters, URL-safe base64 with ``-``/``_``, a
leading ``+``), forms it tolerates a character of (unpadded base64), the order in which
overlapping forms are tried, and what ``secret_values``, ``redact`` and ``redact_text``
find: nested tables and lists under secret keys, short values from the environment,
defaults, URL passwords, token-shaped strings and their word boundaries. Each was seen to
fail with its branch removed. The configuration's display redactions, and a failing pack's
message through the Python API, are pinned at the end.
"""

from __future__ import annotations

import base64
import json
import logging
from typing import Any
from urllib.parse import quote_plus

import pytest

from toolpacks import Host, hookimpl
from toolpacks.core._secrets import (
    MASK,
    REDACTED,
    holds_secret,
    is_secret_key,
    redact,
    redact_text,
    scrub,
    secret_values,
)

# -- forms scrub finds -------------------------------------------------------------------------


def test_json_escaped_non_ascii_secret_is_scrubbed() -> None:
    """JSON written with ``ensure_ascii=False``: a quote escaped, the ``ä`` kept as it is."""
    secret = 'pä"ss-wörd'
    form = json.dumps(secret, ensure_ascii=False)[1:-1]
    assert form not in (secret, json.dumps(secret)[1:-1])
    assert scrub(f"<{form}>", [secret]) == f"<{MASK}>"


def test_repr_escaped_control_characters_are_scrubbed() -> None:
    r"""``repr`` keeps ``é`` and escapes a control character as ``\x01``: a form of its own."""
    secret = "pé\x01cd-efgh"
    form = repr(secret)[1:-1]
    others = (json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1])
    assert form not in (secret, *others, repr(secret.encode())[2:-1])
    assert scrub(f"<{form}>", [secret]) == f"<{MASK}>"


def test_url_safe_base64_with_its_own_characters_is_scrubbed() -> None:
    """A secret whose base64 holds ``+`` and ``/``: the URL-safe ``-`` and ``_`` are found."""
    secret = "a>>>b???c~~"
    standard = base64.b64encode(secret.encode()).decode()
    urlsafe = base64.urlsafe_b64encode(secret.encode()).decode()
    assert set("+/") & set(standard)
    assert urlsafe != standard
    assert scrub(f"<{urlsafe}>", [secret]) == f"<{MASK}>"


def test_unpadded_base64_is_scrubbed_whole() -> None:
    """Base64 without its ``=`` padding is replaced whole, not its core with a char left."""
    secret = "ten-bytes!"
    unpadded = base64.b64encode(secret.encode()).decode().rstrip("=")
    assert len(unpadded) % 4
    assert scrub(f"<{unpadded}>", [secret]) == f"<{MASK}>"


def test_quote_plus_of_a_secret_starting_with_a_space() -> None:
    """``quote_plus`` turns a leading space into ``+``: that first character is found too."""
    secret = " lead-space-secret"
    assert scrub(f"<{quote_plus(secret)}>", [secret]) == f"<{MASK}>"


def test_overlapping_forms_try_the_longer_first() -> None:
    """Where two secrets' forms share a start, the longer is tried first: nothing is left."""
    short, long = "ab/c1", "ab%2Fc1-and-more"  # ``ab%2Fc1`` is also ``short`` percent-encoded
    assert scrub(f"<{long}>", [short, long]) == f"<{MASK}>"
    assert scrub(f"<{long}>", [long, short]) == f"<{MASK}>"


def test_empty_secrets_are_ignored() -> None:
    """An empty secret would match everywhere: it is dropped, the others still apply."""
    assert scrub("abc", ["", "zzzz"]) == "abc"
    assert scrub("a zzzz", ["", "zzzz"]) == f"a {MASK}"
    assert not holds_secret("abc", [""])
    assert holds_secret("a zzzz", ["", "zzzz"])


# -- what is free text's token, and what is not --------------------------------------------------


def test_an_aws_access_key_in_free_text_is_masked() -> None:
    """``AKIA`` followed by its upper-case run is masked in a message."""
    text = "using key AKIAABCDEFGHIJKLMNOP for the upload"
    assert redact_text(text) == f"using key {REDACTED} for the upload"


def test_a_token_prefix_inside_a_word_is_not_a_token() -> None:
    """``task-manager-...`` holds ``sk-`` but is no token: it is left as it is."""
    text = "task-manager-12345678 and desk_live_abcdefgh"
    assert redact_text(text) == text
    assert redact_text("sk-abcdefgh1234") == REDACTED


def test_token_masking_in_text_can_be_turned_off() -> None:
    """``tokens=False`` (configuration values) keeps a token-shaped substring."""
    text = "prefix sk-abcdefgh1234 suffix"
    assert redact_text(text, tokens=False) == text
    assert redact_text(text) == f"prefix {REDACTED} suffix"


def test_cookie_names_a_secret_key() -> None:
    """``cookie`` alone, and in a compound name, is secret-looking."""
    assert is_secret_key("cookie")
    assert is_secret_key("Set-Cookie")
    assert is_secret_key("cookies")


# -- what redact hides ---------------------------------------------------------------------------


def test_redact_hides_every_value_of_a_table_under_a_secret_key() -> None:
    """Inside ``password = { user = ..., value = ... }`` even ``user`` is hidden."""
    shown = redact({"password": {"user": "bob", "value": "v", "deeper": {"x": "y"}}})
    assert shown == {"password": {"user": REDACTED, "value": REDACTED, "deeper": {"x": REDACTED}}}


def test_redact_hides_every_item_of_a_list_under_a_secret_key() -> None:
    """``tokens = ["a", "b"]``: each item is hidden."""
    assert redact({"tokens": ["a", "b"], "names": ["a"]}) == {
        "tokens": [REDACTED, REDACTED],
        "names": ["a"],
    }


def test_redact_hides_known_secrets_inside_ordinary_values() -> None:
    """A value read from the environment, quoted under an ordinary key, is hidden there."""
    shown = redact({"note": "calls with abc-secret-1 daily"}, ["abc-secret-1"])
    assert shown == {"note": f"calls with {REDACTED} daily"}


# -- what secret_values finds ------------------------------------------------------------------


def test_secret_values_include_everything_under_a_secret_table() -> None:
    """The ``user`` of an ``auth`` table is a secret to scrub, as is its password."""
    assert secret_values({"auth": {"user": "bob-user", "password": "pw-123"}}) == [
        "bob-user",
        "pw-123",
    ]


def test_secret_values_include_every_item_of_a_secret_list() -> None:
    """``tokens = [...]``: each item is a secret."""
    assert secret_values({"tokens": ["t1-xx", "t2-xx"]}) == ["t1-xx", "t2-xx"]


def test_short_environment_values_count_only_under_secret_keys() -> None:
    """``pin``-short values read from the environment: secret under ``token``, not ``region``."""
    environ = {"T": "ab", "R": "eu"}
    settings = {"token": {"env": "T"}, "region": {"env": "R"}}
    assert secret_values(settings, environ) == ["ab"]


def test_a_url_password_inside_an_environment_value_is_a_secret_of_its_own() -> None:
    """``dsn`` read from the environment: the whole value and its URL password alone."""
    environ = {"D": "postgres://app:pw-9911@db/main"}
    assert secret_values({"dsn": {"env": "D"}}, environ) == [environ["D"], "pw-9911"]


def test_the_default_of_an_unset_secret_reference_is_a_secret() -> None:
    """``api_key = { env = "X", default = "..." }`` with X unset: the default is the secret."""
    found = secret_values({"api_key": {"env": "X", "default": "dflt-secret"}}, {})
    assert found == ["dflt-secret"]


def test_url_passwords_and_token_values_are_secrets_under_any_key() -> None:
    """An ordinary key holding a URL with a password, or a token-like string."""
    found = secret_values({"url": "https://u:pass-77@h/x", "header": "ghp_abcdefghijkl"})
    assert found == ["pass-77", "ghp_abcdefghijkl"]


# -- the configuration's display redactions ----------------------------------------------------


MCP_SECRET = "mcp-display-secret-41"


@pytest.mark.parametrize("name", ["api_token", "PLAIN_NAME"])
def test_an_invalid_configuration_error_shows_no_secret(name: str) -> None:
    """A wrong value in a server's ``env`` (its key lost to the value) is not quoted."""
    from toolpacks.exceptions import ConfigError

    config = {"mcp_servers": {"gh": {"command": "x", "env": {name: [MCP_SECRET]}}}}
    with pytest.raises(ConfigError) as caught:
        Host(config, discover=False)
    message = str(caught.value)
    assert f"mcp_servers.gh.env.{name}" in message  # the error is about that value
    assert MCP_SECRET not in message


def test_an_invalid_value_under_a_secret_looking_key_is_not_quoted() -> None:
    """Under a secret-looking part of the key path, the wrong value is hidden whole."""
    from toolpacks.exceptions import ConfigError

    config = {"mcp_servers": {"auth_proxy": {"command": "x", "require_approval": {"a": "v-77"}}}}
    with pytest.raises(ConfigError) as caught:
        Host(config, discover=False)
    assert "mcp_servers.auth_proxy.require_approval" in str(caught.value)
    assert "v-77" not in str(caught.value)


SERVERS = {
    "mcp_servers": {
        "gh": {
            "command": "never-started",
            "args": ["--token", MCP_SECRET],
            "env": {"PLAIN_NAME": MCP_SECRET},
        },
        "remote": {"url": "https://example.invalid/mcp", "headers": {"X-Plain": MCP_SECRET}},
    }
}
"""MCP servers whose environment and headers hold a value neither its name nor its shape
marks as secret: only the tables they are in do."""


@pytest.mark.parametrize("server", ["gh", "remote"])
def test_a_server_configs_repr_hides_its_environment_and_headers(server: str) -> None:
    """``repr`` of one ``[mcp_servers.NAME]`` keeps the names, hides every value."""
    shown = repr(Host(SERVERS, discover=False).config.config.mcp_servers[server])
    assert MCP_SECRET not in shown
    assert ("PLAIN_NAME" if server == "gh" else "X-Plain") in shown


def test_the_raw_configuration_shown_hides_server_environments_and_headers() -> None:
    """``repr(host.config)`` (its raw part, ``shown_raw``) hides those values too."""
    from toolpacks.host.config._load import shown_raw

    config = Host(SERVERS, discover=False).config
    for text in (repr(shown_raw(config.raw)), repr(config)):
        assert MCP_SECRET not in text
        assert "PLAIN_NAME" in text
        assert "X-Plain" in text
        assert "--token" in text


# -- a failing pack's message (Python API) -------------------------------------------------------


class Failing:
    """A pack whose registration fails quoting its settings."""

    @hookimpl
    def register_tools(self, register: Any) -> None:
        settings = register.config
        raise RuntimeError(f"cannot connect with {settings['dsn']} ({settings['api_key']})")


@pytest.mark.parametrize("road", ["file", "add_pack"])
def test_a_failing_packs_message_hides_its_secret_settings(
    road: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``Host.load``/``Host.pack``: the failure message masks the pack's secret settings."""
    environ = {"TP_FAIL_DSN": "postgres://app:dsn-pw-31@db/main"}
    settings = {"dsn": {"env": "TP_FAIL_DSN"}, "api_key": "literal-api-key-88"}
    if road == "file":
        host = Host({"packs": {"db": settings}}, discover=False, environ=environ)
        host.add_pack(Failing(), "db")
    else:
        host = Host({}, discover=False, environ=environ)
        host.add_pack(Failing(), "db", config=settings)
    with caplog.at_level(logging.WARNING, logger="toolpacks"):
        loaded = host.load("db")
    error = host.pack("db").error or ""
    assert loaded.info.status == "failed"
    assert "cannot connect with" in error
    for secret in ("dsn-pw-31", "literal-api-key-88", environ["TP_FAIL_DSN"]):
        assert secret not in error
        assert secret not in caplog.text
    assert MASK in error
